import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { EventEnvelope } from '../../../common/event-envelope';

/**
 * Webhook secrets and signatures as the Standard Webhooks specification writes them
 * (https://www.standardwebhooks.com/): the secret is `whsec_<base64 key>`, and a message carries
 * `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`, a space-separated list
 * of `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, one per secret that signs it. While a
 * rotated-out secret still signs (24 h after rotate-secret), the list holds two, and a receiver
 * that knows either one accepts the message.
 */

/** 32 random bytes: the HMAC-SHA256 key length the specification recommends (24 to 64). */
const KEY_BYTES = 32;

/** How long a rotated-out secret keeps signing beside the new one (issue 35: 24 h). */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3_600_000;

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(KEY_BYTES).toString('base64')}`;
}

/** The POSTed body: the event's id, type, time and data (never its tenant, which the endpoint knows). */
export function webhookBody(envelope: Pick<EventEnvelope, 'id' | 'type' | 'timestamp' | 'data'>): string {
  return JSON.stringify({ id: envelope.id, type: envelope.type, timestamp: envelope.timestamp, data: envelope.data });
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The headers of one request. `messageId` is the event id, the same on every retry of the event
 * to an endpoint (receivers de-duplicate by it); `at` is the moment of sending, which receivers
 * check against their clock.
 */
export function signWebhook(secrets: readonly string[], messageId: string, at: Date, body: string): SignedHeaders {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(messageId, at, body)).join(' '),
  };
}

/** The secrets that sign now: the endpoint's own, then the rotated-out one until it expires. */
export function signingSecrets(
  endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: string | null }, now: Date,
): string[] {
  const previousValid = endpoint.previousSecret !== null && endpoint.previousSecretExpiresAt !== null
    && Date.parse(endpoint.previousSecretExpiresAt) > now.getTime();
  return previousValid ? [endpoint.secret, endpoint.previousSecret!] : [endpoint.secret];
}
