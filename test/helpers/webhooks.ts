import type { IncomingMessage, ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { newId } from '../../common/ids';
import type { DatabasePool } from '../../db/pool';
import { insertWebhookEndpoint, type WebhookEndpointRow } from '../../db/queries/events/webhooks.queries';
import { newWebhookSecret } from '../../services/events/webhooks/signing';
import type { WebhookUrlPolicy } from '../../services/events/webhooks/url-policy';
import { serve } from './http';

/**
 * Outbound webhooks' tests: a receiver on 127.0.0.1 that checks every request's signature with the
 * standardwebhooks package, as an integrator's receiver would, and endpoints written as the owner
 * role for the workflow tests (the routes are the API tests' subject).
 */

/** The test stack's policy: the receivers listen on loopback (WEBHOOKS_ALLOW_LOOPBACK=true). */
export const testWebhookPolicy: WebhookUrlPolicy = { allowHttp: false, allowLoopback: true };

export interface ReceivedWebhook {
  path: string;
  headers: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string };
  body: string;
  /** The parsed body, {id, type, timestamp, data}. */
  payload: { id: string; type: string; timestamp: string; data: Record<string, unknown> };
  /** The secrets of `secrets()` that verify the request (standardwebhooks Webhook.verify). */
  verifiedBy: string[];
}

export interface WebhookReceiver {
  /** The URL of a path on the receiver (`/a` by default). */
  url(path?: string): string;
  received: ReceivedWebhook[];
  /** The requests to `path`. */
  at(path: string): ReceivedWebhook[];
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** The HTTP status a request to `path` is answered with; 204 unless given. */
  status?: (path: string, request: ReceivedWebhook) => number;
  /** The secrets the receiver knows, read at each request (a rotation adds one). */
  secrets?: () => readonly string[];
}

function header(request: IncomingMessage, name: string): string {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value ?? '';
}

export async function startWebhookReceiver(options: ReceiverOptions = {}): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const server = await serve((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': header(request, 'webhook-id'),
        'webhook-timestamp': header(request, 'webhook-timestamp'),
        'webhook-signature': header(request, 'webhook-signature'),
      };
      const verifiedBy = (options.secrets?.() ?? []).filter((secret) => {
        try {
          new Webhook(secret).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      const entry: ReceivedWebhook = { path: request.url ?? '/', headers, body, payload: JSON.parse(body) as ReceivedWebhook['payload'], verifiedBy };
      received.push(entry);
      response.statusCode = options.status?.(entry.path, entry) ?? 204;
      response.end();
    });
  });
  return {
    url: (path = '/a') => `${server.baseUrl}${path}`,
    received,
    at: (path) => received.filter((entry) => entry.path === path),
    close: () => server.close(),
  };
}

/** An endpoint of the tenant, as POST /webhooks/endpoints writes it. */
export function seedWebhookEndpoint(owner: DatabasePool, tenantId: string, url: string, eventTypes: string[] = ['test.*']): Promise<WebhookEndpointRow> {
  return owner.transaction((tx) => insertWebhookEndpoint(tx, { id: newId(), tenantId, url, eventTypes, description: 'test', secret: newWebhookSecret() }));
}
