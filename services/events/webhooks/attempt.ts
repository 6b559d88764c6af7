import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Config } from '../../../common/config';
import { newId } from '../../../common/ids';
import type { DatabasePool } from '../../../db/pool';
import { resolveDeadLetter, upsertDeadLetter } from '../../../db/queries/events/dead-letters.queries';
import {
  clearWebhookEndpointFailing, markWebhookEndpointFailing, selectWebhookEndpoint, settleWebhookAttempt, startWebhookAttempt,
} from '../../../db/queries/events/webhooks.queries';
import { selectRoleHolderEmails } from '../../../db/queries/identity/members.queries';
import { withTenant } from '../../../db/tenant';
import {
  WEBHOOK_DISABLE_AFTER_MS, webhookConsumerGroup, type WebhookAttemptInput, type WebhookAttemptResult, type WebhookDeadLetterInput,
} from '../../../workflows/events/webhooks.messages';
import { errorText } from '../consumers/delivery-rules';
import { signingSecrets, signWebhook, webhookBody } from './signing';
import { checkWebhookUrl, webhookLookup, type WebhookUrlPolicy } from './url-policy';

/**
 * One attempt of a delivery (issue 35), run by the delivery workflow's activity: the attempt is
 * written pending, the event POSTed, and the attempt settled with the answer together with the
 * endpoint's failing streak, in the tenant's transactions (application role, row-level security).
 */

/** Issue 35: no answer within 15 s is a failed attempt. */
export const WEBHOOK_REQUEST_TIMEOUT_MS = 15_000;

/** The longest error text an attempt keeps (the column allows 500). */
const ERROR_MAX_CHARS = 300;

export interface WebhookAttemptDeps {
  appPool: DatabasePool;
  policy: WebhookUrlPolicy;
  /** The dead letters' retention and loop guard (EVENTS_DLQ_RETENTION_HOURS, EVENTS_DLQ_QUARANTINE_AFTER). */
  consumers: Pick<Config['consumers'], 'dlqRetentionHours' | 'dlqQuarantineAfter'>;
  /** Tests shorten it; WEBHOOK_REQUEST_TIMEOUT_MS otherwise. */
  requestTimeoutMs?: number;
}

/** What one request came to: the answer's status, or why there was none. */
export type PostOutcome = { status: number; durationMs: number } | { status: null; durationMs: number; error: string };

/**
 * POSTs the body: redirects are not followed (a 3xx fails the attempt: a redirect could point
 * anywhere), the host's addresses are checked by webhookLookup and connected to as checked, and
 * the whole exchange up to the answer's status line is bounded by `timeoutMs`. The answer's body is
 * not read.
 */
export function postWebhook(url: URL, body: string, headers: Record<string, string>, policy: WebhookUrlPolicy, timeoutMs: number): Promise<PostOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const request = send(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'platform-webhooks/1' },
      lookup: webhookLookup(policy),
      // A connection of its own: a pooled one might have been opened to an address that was not checked.
      agent: false,
      signal: AbortSignal.timeout(timeoutMs),
    }, (response: IncomingMessage) => {
      response.on('error', () => undefined);
      response.resume();
      request.destroy();
      resolve({ status: response.statusCode ?? 0, durationMs: elapsed() });
    });
    request.on('error', (error: Error) => {
      const timedOut = error.name === 'AbortError' || error.name === 'TimeoutError';
      resolve({ status: null, durationMs: elapsed(), error: timedOut ? `no answer within ${timeoutMs / 1000} s` : errorText(error) });
    });
    request.end(body);
  });
}

const isDelivered = (status: number | null) => status !== null && status >= 200 && status < 300;

const shortened = (text: string) => (text.length > ERROR_MAX_CHARS ? `${text.slice(0, ERROR_MAX_CHARS - 1)}…` : text);

/**
 * One attempt. Nothing is sent to an endpoint that was deleted (endpoint-gone) or turned off
 * (endpoint-disabled). The URL is checked again (its form and an IP literal: the platform's policy
 * may have changed since it was stored), then each resolved address. A delivered attempt ends the
 * endpoint's failing streak and resolves the delivery's dead letter, if a retry of one brought it
 * here; a failed one starts or continues the streak, and the failure that makes it 5 days long turns
 * the endpoint off (disabledNow).
 */
export async function attemptWebhook(deps: WebhookAttemptDeps, input: WebhookAttemptInput, workflowRunId: string): Promise<WebhookAttemptResult> {
  const { tenantId, endpointId, envelope } = input;
  const started = await withTenant(deps.appPool, tenantId, async (tx) => {
    const endpoint = await selectWebhookEndpoint(tx, tenantId, endpointId);
    if (!endpoint) return 'endpoint-gone' as const;
    if (!endpoint.enabled && !input.evenIfDisabled) return 'endpoint-disabled' as const;
    const attemptId = await startWebhookAttempt(tx, {
      id: newId(), tenantId, endpointId, eventId: envelope.id, eventType: envelope.type, workflowRunId, attempt: input.attempt,
      attemptedAt: input.attemptedAt,
    });
    return { endpoint, attemptId };
  });
  if (typeof started === 'string') return { outcome: started };
  const { endpoint, attemptId } = started;

  let outcome: PostOutcome;
  try {
    const url = checkWebhookUrl(endpoint.url, deps.policy);
    const body = webhookBody(envelope);
    const now = new Date();
    const headers = signWebhook(signingSecrets(endpoint, now), envelope.id, now, body);
    outcome = await postWebhook(url, body, { ...headers }, deps.policy, deps.requestTimeoutMs ?? WEBHOOK_REQUEST_TIMEOUT_MS);
  } catch (error) {
    outcome = { status: null, durationMs: 0, error: errorText(error) };
  }
  const delivered = isDelivered(outcome.status);
  const error = delivered ? null : shortened('error' in outcome ? outcome.error : `answered HTTP ${outcome.status}`);

  return withTenant(deps.appPool, tenantId, async (tx): Promise<WebhookAttemptResult> => {
    await settleWebhookAttempt(tx, tenantId, attemptId, {
      status: delivered ? 'succeeded' : 'failed', responseStatus: outcome.status, durationMs: outcome.durationMs, error,
      nextAttemptAt: delivered ? null : input.nextAttemptAt,
    });
    if (delivered) {
      await clearWebhookEndpointFailing(tx, tenantId, endpointId);
      await resolveDeadLetter(tx, tenantId, webhookConsumerGroup(endpointId), envelope.id);
      return { outcome: 'delivered', responseStatus: outcome.status! };
    }
    // Locked: of two deliveries failing at once, one sees the streak reach 5 days and turns the endpoint off.
    const locked = await selectWebhookEndpoint(tx, tenantId, endpointId, true);
    const since = locked?.failingSince ?? input.attemptedAt;
    const disable = !!locked?.enabled && Date.parse(input.attemptedAt) - Date.parse(since) >= WEBHOOK_DISABLE_AFTER_MS;
    if (locked) await markWebhookEndpointFailing(tx, tenantId, endpointId, input.attemptedAt, disable);
    return { outcome: 'failed', responseStatus: outcome.status, error: error!, disabledNow: disable, url: endpoint.url };
  });
}

/**
 * After the last attempt (or once the endpoint is off): the event is dead-lettered under the
 * consumer group `webhooks.<endpointId>`, where GET /integrations/dlq lists it and a retry
 * (POST /integrations/dlq/{id}/retry, DLQRetry, replay-all) re-publishes it for the dispatcher,
 * which delivers it to this endpoint again (dispatcher.ts).
 */
export async function deadLetterWebhook(deps: WebhookAttemptDeps, input: WebhookDeadLetterInput): Promise<void> {
  const { tenantId, endpointId, envelope, source } = input;
  await withTenant(deps.appPool, tenantId, (tx) => upsertDeadLetter(tx, {
    id: newId(), tenantId, consumerGroup: webhookConsumerGroup(endpointId), topic: source.topic, partition: source.partition,
    offset: source.offset, eventKey: source.key, eventId: envelope.id, eventType: envelope.type, envelope: { ...envelope },
    correlationId: source.correlationId, attemptCount: input.attempts, lastError: input.lastError,
    expiresAt: new Date(Date.now() + deps.consumers.dlqRetentionHours * 3_600_000).toISOString(),
    quarantineAfter: deps.consumers.dlqQuarantineAfter,
  }));
}

/** The addresses of the tenant's owners: they are told when an endpoint is turned off. */
export function webhookOwnerEmails(deps: Pick<WebhookAttemptDeps, 'appPool'>, tenantId: string): Promise<string[]> {
  return withTenant(deps.appPool, tenantId, (tx) => selectRoleHolderEmails(tx, tenantId, ['owner']));
}
