import type { BillingProvider, ProviderEvent } from '../../../workflows/billing/billing.messages';

/**
 * The four handled event types per provider (docs/reference/billing.md#rule-24) reduced to what the subscription
 * workflow needs. The tenant comes from the metadata we put on the provider's objects:
 * `metadata.tenantId` on Stripe's event object, `custom_data.tenantId` on Paddle's data.
 */
export interface ParsedWebhook {
  eventId: string;
  eventType: string;
  tenantId?: string;
  /** Undefined for an event type the platform does not act on (it is acknowledged and ignored). */
  event?: ProviderEvent;
}

type Json = Record<string, unknown>;
const obj = (value: unknown): Json => (value && typeof value === 'object' && !Array.isArray(value) ? value as Json : {});
const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const first = (value: unknown): Json => obj(Array.isArray(value) ? value[0] : undefined);
const unixToIso = (value: unknown): string | undefined =>
  (typeof value === 'number' && Number.isFinite(value) ? new Date(value * 1000).toISOString() : undefined);
const isoOrUndefined = (value: unknown): string | undefined => {
  const text = str(value);
  return text && !Number.isNaN(Date.parse(text)) ? new Date(text).toISOString() : undefined;
};

const STRIPE_KINDS: Record<string, ProviderEvent['kind']> = {
  'invoice.paid': 'payment_succeeded',
  'invoice.payment_failed': 'payment_failed',
  'customer.subscription.deleted': 'canceled',
  'customer.subscription.updated': 'updated',
};

const PADDLE_KINDS: Record<string, ProviderEvent['kind']> = {
  'transaction.completed': 'payment_succeeded',
  'transaction.payment_failed': 'payment_failed',
  'subscription.canceled': 'canceled',
  'subscription.updated': 'updated',
};

function parseStripe(payload: Json): ParsedWebhook | undefined {
  const eventId = str(payload.id);
  const eventType = str(payload.type);
  if (!eventId || !eventType) return undefined;
  const object = obj(obj(payload.data).object);
  const metadata = obj(object.metadata);
  const kind = STRIPE_KINDS[eventType];
  const parsed: ParsedWebhook = { eventId, eventType, tenantId: str(metadata.tenantId) };
  if (!kind) return parsed;
  const line = first(obj(object.lines).data);
  const planId = str(metadata.planId) ?? str(obj(first(obj(object.items).data).price).lookup_key);
  const periodEnd = unixToIso(object.period_end) ?? unixToIso(obj(line.period).end);
  parsed.event = { provider: 'stripe', eventId, kind, ...(planId ? { planId } : {}), ...(periodEnd && kind === 'payment_succeeded' ? { periodEnd } : {}) };
  return parsed;
}

function parsePaddle(payload: Json): ParsedWebhook | undefined {
  const eventId = str(payload.event_id);
  const eventType = str(payload.event_type);
  if (!eventId || !eventType) return undefined;
  const data = obj(payload.data);
  const customData = obj(data.custom_data);
  const kind = PADDLE_KINDS[eventType];
  const parsed: ParsedWebhook = { eventId, eventType, tenantId: str(customData.tenantId) };
  if (!kind) return parsed;
  const planId = str(customData.planId) ?? str(obj(obj(first(data.items).price).custom_data).planId);
  const periodEnd = isoOrUndefined(obj(data.billing_period).ends_at);
  parsed.event = { provider: 'paddle', eventId, kind, ...(planId ? { planId } : {}), ...(periodEnd && kind === 'payment_succeeded' ? { periodEnd } : {}) };
  return parsed;
}

/** Undefined when the payload lacks the event id or type every provider event carries. */
export function parseWebhook(provider: BillingProvider, payload: unknown): ParsedWebhook | undefined {
  return provider === 'stripe' ? parseStripe(obj(payload)) : parsePaddle(obj(payload));
}
