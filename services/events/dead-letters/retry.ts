import { problems } from '../../../common/problems';
import type { DatabaseTransactionConnection } from '../../../db/pool';
import {
  lockDeadLetter, lockDeadLettersOfEvent, markDeadLettersRetrying, selectDeadLetter, type DeadLetterRow,
} from '../../../db/queries/events/dead-letters.queries';
import { withTenant } from '../../../db/tenant';
import type { AuditEntry, AuditTrail } from '../audit-trail';
import { enqueueEvents } from '../publish';
import { deadLetterAudit, type DeadLetterActor } from './audit';
import type { DeadLetterDeps, RedeliveryProducer } from './deps';
import { redeliveryRecord } from './redelivery';
import { deadLetterView, type DeadLetterView } from './views';

/**
 * Retrying dead letters (docs/reference/events.md#rule-17: DLQRetry; REST POST /integrations/dlq/:id/retry):
 *
 * | Status   | Retry                                                                  |
 * |----------|------------------------------------------------------------------------|
 * | pending  | re-published for its group, then retrying                              |
 * | retrying | re-published again, stays retrying (the earlier redelivery may be lost) |
 * | resolved | refused: 400 dead-letter-not-retryable / FAILED_PRECONDITION           |
 * | expired  | refused: 400 dead-letter-not-retryable / FAILED_PRECONDITION           |
 *
 * The row is locked while its redelivery is sent, so two retries of one dead letter go one after the
 * other and the consumer's outcome (resolveDeadLetter, which waits for the lock) lands after the
 * mark. The mark and its audit record commit only once Kafka acknowledged the send; a broker that
 * cannot take it is 503 events-broker-unavailable and the row stays as it was. An explicit retry
 * works on a quarantined dead letter too: the loop guard only keeps replay-all away from it.
 */

const RETRYABLE: ReadonlySet<DeadLetterRow['status']> = new Set(['pending', 'retrying']);

/** A UUID in the form the uuid column reads; anything else names no dead-lettered event. */
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Sends the rows' redeliveries in one producer batch, then marks them retrying and writes their
 * audit records (each row's entry, in one statement), in the caller's transaction (which holds their locks).
 */
export async function redeliver(
  tx: DatabaseTransactionConnection, deps: { producer: RedeliveryProducer; audit: AuditTrail }, rows: readonly DeadLetterRow[],
  entryOf: (row: DeadLetterRow) => AuditEntry,
): Promise<void> {
  if (rows.length === 0) return;
  const records = rows.map(redeliveryRecord);
  await deps.producer.send(records);
  const [{ tenantId }] = rows;
  await markDeadLettersRetrying(tx, tenantId, rows.map((row) => row.id));
  await enqueueEvents(tx, rows.map((row) => deps.audit.eventOf(entryOf(row))));
}

/** The gateway's send: any failure of the broker is the caller's 503 (docs/reference/events.md#rule-10), and nothing is written. */
function redeliverNow(tx: DatabaseTransactionConnection, deps: DeadLetterDeps, rows: readonly DeadLetterRow[], actor: DeadLetterActor): Promise<void> {
  const failFast: RedeliveryProducer = {
    async send(records) {
      try {
        await deps.producer.send(records);
      } catch (error) {
        throw problems.eventsBrokerUnavailable(error);
      }
    },
  };
  return redeliver(tx, { producer: failFast, audit: deps.audit }, rows, (row) => deadLetterAudit('events.dlq.retried', row, actor));
}

/** POST /integrations/dlq/:id/retry: the dead letter, re-published, as it is now (retrying). */
export async function retryDeadLetter(deps: DeadLetterDeps, actor: DeadLetterActor, id: string): Promise<DeadLetterView> {
  const { tenantId } = actor;
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockDeadLetter(tx, tenantId, id);
    if (!row) throw problems.notFound('dead letter');
    if (!RETRYABLE.has(row.status)) throw problems.deadLetterNotRetryable(`Dead letter ${id}`, row.status);
    await redeliverNow(tx, deps, [row], actor);
    return deadLetterView((await selectDeadLetter(tx, tenantId, id))!);
  });
}

/** DLQRetryResponse.message of a retry that re-published the event. */
export interface EventRetried {
  message: string;
}

/**
 * DLQRetry {event_id} names the event (docs/reference/events.md#rule-17), and an event may be dead-lettered by several
 * groups (one record each). Every open record of it is re-published for its group, in one batch;
 * an event with records but none open is FAILED_PRECONDITION naming their statuses; an event without
 * any (or another tenant's) is NOT_FOUND.
 */
export async function retryEvent(deps: DeadLetterDeps, actor: DeadLetterActor, eventId: string): Promise<EventRetried> {
  if (!eventId) throw problems.validation([{ field: 'event_id', code: 'REQUIRED', message: 'event_id is required' }]);
  if (!CANONICAL_UUID.test(eventId)) throw problems.validation([{ field: 'event_id', code: 'INVALID_FORMAT', message: 'event_id must be a UUID' }]);
  const { tenantId } = actor;
  return withTenant(deps.db, tenantId, async (tx) => {
    const rows = await lockDeadLettersOfEvent(tx, tenantId, eventId);
    if (rows.length === 0) throw problems.notFound('dead-lettered event');
    const open = rows.filter((row) => RETRYABLE.has(row.status));
    if (open.length === 0) {
      throw problems.deadLetterNotRetryable(`Event ${eventId}`, [...new Set(rows.map((row) => row.status))].join(' and '));
    }
    await redeliverNow(tx, deps, open, actor);
    const groups = open.map((row) => row.consumerGroup).join(', ');
    return { message: `Event ${eventId} was re-published to ${open[0].topic} for ${open.length === 1 ? 'consumer group' : 'consumer groups'} ${groups}` };
  });
}
