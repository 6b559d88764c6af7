import { decodeEvent, EVENT_HEADERS, EventDecodeError, headerValue, type DecodedEvent, type ReceivedMessage } from '../envelope';

/**
 * The pure half of a consumer group's delivery (docs/reference/events.md, rules 15 and 16; docs/decisions/events.md,
 * Consumer groups): which messages a group handles at all, how long its receipt is kept, how often
 * and with which pauses its handler is tried. group-consumer.ts does the I/O around it.
 */

/** What a group reads a message for. */
export interface GroupFilter {
  /** The Kafka group id (kafkaGroupId): what a redelivery's `redeliverTo` header names. */
  groupId: string;
  /** A tenant subscription's tenant; null for a platform group, which handles every tenant's events. */
  tenantId: string | null;
  /** The event types the group receives (its module's `events.subscribes`). */
  accepts: (type: string) => boolean;
  /**
   * Dead letters the group's handler writes under names of its own (the webhook dispatcher's
   * `webhooks.<endpointId>`, services/events/webhooks/dispatcher.ts): the redeliveries naming them
   * are this group's to handle too.
   */
  adopts?: (redeliverTo: string) => boolean;
}

export type SkipReason =
  /** The event belongs to another tenant than the subscription's. */
  | 'other-tenant'
  /** A dead letter's redelivery for another group, which has handled it already. */
  | 'redelivered-to-another-group'
  /** A type the group does not receive. */
  | 'type-not-received'
  /** Not an event envelope of ours, or headers that contradict its envelope. */
  | 'not-an-event'
  /** A tenant the group's handler does nothing for (GroupConsumerOptions.tenantsServed: a module it has not installed). */
  | 'tenant-not-served';

export type Screening =
  | { kind: 'skip'; reason: SkipReason; detail?: string }
  | {
    kind: 'deliver'; event: DecodedEvent; redelivery: boolean;
    /** A redelivery for a name the group adopts (GroupFilter.adopts): that name. */
    adoptedFor?: string;
  };

/**
 * Decides whether a group handles a message. The headers decide first (tenant, redelivery target,
 * type), so most messages another group or tenant is meant for are passed over without parsing
 * their value; a message that passes is decoded, and its envelope must agree with the headers it
 * was screened by (a tenant subscription never handles another tenant's event, whatever a header
 * says). A message without headers is screened by its envelope alone.
 */
export function screenMessage(message: ReceivedMessage, filter: GroupFilter): Screening {
  const tenantHeader = headerValue(message, EVENT_HEADERS.tenantId);
  const typeHeader = headerValue(message, EVENT_HEADERS.type);
  const redeliverTo = headerValue(message, EVENT_HEADERS.redeliverTo);
  if (filter.tenantId !== null && tenantHeader !== undefined && tenantHeader !== filter.tenantId) return { kind: 'skip', reason: 'other-tenant' };
  const adopted = redeliverTo !== undefined && redeliverTo !== filter.groupId && filter.adopts?.(redeliverTo) === true;
  if (redeliverTo !== undefined && redeliverTo !== filter.groupId && !adopted) return { kind: 'skip', reason: 'redelivered-to-another-group' };
  if (typeHeader !== undefined && !filter.accepts(typeHeader)) return { kind: 'skip', reason: 'type-not-received' };

  let event: DecodedEvent;
  try {
    event = decodeEvent(message);
  } catch (error) {
    if (error instanceof EventDecodeError) return { kind: 'skip', reason: 'not-an-event', detail: error.message };
    throw error;
  }
  const { tenantId, type, id } = event.envelope;
  const idHeader = headerValue(message, EVENT_HEADERS.id);
  const contradicted = [
    tenantHeader !== undefined && tenantHeader !== tenantId ? 'tenantId' : null,
    typeHeader !== undefined && typeHeader !== type ? 'type' : null,
    idHeader !== undefined && idHeader !== id ? 'id' : null,
  ].filter((name) => name !== null);
  if (contradicted.length > 0) return { kind: 'skip', reason: 'not-an-event', detail: `headers ${contradicted.join(', ')} contradict the envelope` };
  if (filter.tenantId !== null && tenantId !== filter.tenantId) return { kind: 'skip', reason: 'other-tenant' };
  if (!filter.accepts(type)) return { kind: 'skip', reason: 'type-not-received' };
  return { kind: 'deliver', event, redelivery: redeliverTo !== undefined, ...(adopted && { adoptedFor: redeliverTo }) };
}

/** Financial events are remembered forever (docs/reference/events.md#rule-15): a ledger effect must never repeat. */
export function isFinancial(type: string): boolean {
  return type.startsWith('money.');
}

/** When a group's receipt of an event may be forgotten: null (never) for money.*, else `dedupHours` from now. */
export function receiptExpiry(type: string, now: Date, dedupHours: number): string | null {
  return isFinancial(type) ? null : new Date(now.getTime() + dedupHours * 3_600_000).toISOString();
}

/** One pause is at most this long, so a large BROKER_MAX_ATTEMPTS cannot double a pause into hours. */
export const MAX_RETRY_PAUSE_MS = 60_000;

/** The pause before attempt n + 1 (n ≥ 1): `backoffMs`, doubling, capped at MAX_RETRY_PAUSE_MS. */
export function retryPause(attempt: number, backoffMs: number): number {
  return Math.min(backoffMs * 2 ** (attempt - 1), MAX_RETRY_PAUSE_MS);
}

/**
 * Thrown by a handler whose destination is gone (a Subscribe stream the client closed): the
 * message is left unhandled and uncommitted, no attempt is counted, and the consumer stops, so the
 * group's next member receives it.
 */
export class DeliveryAborted extends Error {
  override name = 'DeliveryAborted';
}

export type AttemptsOutcome<T> =
  | { ok: true; attempts: number; value: T }
  | { ok: false; attempts: number; error: unknown };

export interface AttemptSettings {
  maxAttempts: number;
  retryBackoffMs: number;
  /** Waits between attempts (tests pass a recorder). */
  sleep: (ms: number) => Promise<void>;
  /** Called before every pause: the consumer heartbeats, so a long retry does not cost it its partitions. */
  beforePause?: (attempt: number, error: unknown) => Promise<void>;
  /** False once the consumer is stopping: no further attempt is made, the last failure stands. */
  shouldContinue?: () => boolean;
}

/**
 * Tries `attempt` up to `maxAttempts` times, pausing `retryPause` between tries. A DeliveryAborted
 * is not a failure of the event: it is thrown on at once. When the consumer stops between tries,
 * the outcome is a DeliveryAborted too: the event goes to the next member rather than to the
 * dead letters with fewer attempts than configured.
 */
export async function attemptUpTo<T>(attempt: (n: number) => Promise<T>, settings: AttemptSettings): Promise<AttemptsOutcome<T>> {
  let lastError: unknown;
  for (let n = 1; n <= settings.maxAttempts; n += 1) {
    if (n > 1) {
      if (settings.shouldContinue && !settings.shouldContinue()) throw new DeliveryAborted('The consumer stopped between attempts');
      await settings.beforePause?.(n - 1, lastError);
      await settings.sleep(retryPause(n - 1, settings.retryBackoffMs));
    }
    try {
      return { ok: true, attempts: n, value: await attempt(n) };
    } catch (error) {
      if (error instanceof DeliveryAborted) throw error;
      lastError = error;
    }
  }
  return { ok: false, attempts: settings.maxAttempts, error: lastError };
}

/** The most of an error's text a dead letter keeps. */
export const LAST_ERROR_MAX_CHARS = 2000;

/** A dead letter's `last_error`: the error's name and message (a problem's type and detail), never its stack. */
export function errorText(error: unknown): string {
  let text: string;
  if (error instanceof Error) {
    const type = (error as { type?: unknown }).type;
    text = `${typeof type === 'string' ? type : error.name}: ${error.message}`;
  } else {
    text = String(error);
  }
  return text.length > LAST_ERROR_MAX_CHARS ? `${text.slice(0, LAST_ERROR_MAX_CHARS - 1)}…` : text;
}
