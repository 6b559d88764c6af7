import { problems } from '../../common/problems';
import type { DatabaseTransactionConnection } from '../../db/pool';

/**
 * Billing's count of the events a tenant publishes through the bus (events_per_day,
 * docs/reference/billing.md#rule-17), reached as a port: billing sits above the bus in the order of
 * services (.dependency-cruiser.cjs), so the gateway passes billing's meter in where it builds the
 * bus (services/billing/event-usage.ts, api/gateway-runtime.ts).
 */
export interface PublishMeter {
  /**
   * Counts `count` events of the tenant into today's usage (UTC): in `tx` when given (a transaction of
   * that tenant), else in a transaction of its own that commits at once. Refuses them with 402
   * plan-limit-exceeded, counting nothing, when they would pass the plan's daily limit.
   */
  count(tenantId: string, count: number, tx?: DatabaseTransactionConnection): Promise<void>;
  /** Takes back a committed count whose events the broker did not take. Never throws: the broker's error is the caller's. */
  uncount(tenantId: string, count: number): Promise<void>;
}

/**
 * Sends `count` events of a tenant, counted (docs/decisions/billing.md, Counting published events).
 * The events go straight to Kafka, not through the outbox, so no transaction can hold both; the count
 * is taken before the send, which makes the limit exact: concurrent publishes of a tenant are counted
 * one after the other on the counter's row lock, and none passes a limit another just reached.
 * Without `tx` the count commits in a short transaction of its own, so that lock is not held over the
 * broker's round trip, and is taken back when the broker does not take the events. With `tx` (the
 * transaction of an Idempotency-Key, which the send runs under anyway) the count commits with the
 * stored answer and rolls back with a failure. A broker that does not take the events is the
 * caller's 503 events-broker-unavailable.
 */
export async function sendCounted<T>(
  meter: PublishMeter, tenantId: string, count: number, send: () => Promise<T>, tx?: DatabaseTransactionConnection,
): Promise<T> {
  await meter.count(tenantId, count, tx);
  try {
    return await send();
  } catch (error) {
    if (!tx) await meter.uncount(tenantId, count);
    throw problems.eventsBrokerUnavailable(error);
  }
}
