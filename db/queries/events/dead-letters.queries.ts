import { z } from 'zod';
import { sql, type DatabasePool, type DatabaseTransactionConnection } from '../../pool';

/**
 * The dead-letter store (migration 0033; docs/reference/events.md, rules 16 to 19). Statements run inside withTenant
 * and name the tenant as well (tenant scoping twice), so another tenant's dead letter is never
 * read or moved.
 */

const countRow = z.object({ count: z.number() });
const expiredRow = z.object({ expired: z.number().int().nonnegative() });
const nowRow = z.object({ now: z.string() });

export const DEAD_LETTER_STATUSES = ['pending', 'retrying', 'resolved', 'expired'] as const;
export type DeadLetterStatus = (typeof DEAD_LETTER_STATUSES)[number];

export const deadLetterRow = z.object({
  id: z.string(),
  tenantId: z.string(),
  consumerGroup: z.string(),
  topic: z.string(),
  partition: z.number(),
  offset: z.string(),
  eventKey: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  /** The broker message's value (common/event-envelope.ts). */
  envelope: z.record(z.string(), z.unknown()),
  correlationId: z.string().nullable(),
  attemptCount: z.number(),
  lastError: z.string(),
  status: z.enum(DEAD_LETTER_STATUSES),
  timesDeadLettered: z.number(),
  quarantined: z.boolean(),
  deadLetteredAt: z.string(),
  updatedAt: z.string(),
  resolvedAt: z.string().nullable(),
  expiresAt: z.string(),
});
export type DeadLetterRow = z.infer<typeof deadLetterRow>;

const columns = sql.fragment`
  id, tenant_id AS "tenantId", consumer_group AS "consumerGroup", topic, partition, "offset"::text AS "offset",
  event_key AS "eventKey", event_id AS "eventId", event_type AS "eventType", envelope, correlation_id AS "correlationId",
  attempt_count AS "attemptCount", last_error AS "lastError", status, times_dead_lettered AS "timesDeadLettered",
  quarantined, dead_lettered_at AS "deadLetteredAt", updated_at AS "updatedAt", resolved_at AS "resolvedAt",
  expires_at AS "expiresAt"
`;

export interface NewDeadLetter {
  id: string;
  tenantId: string;
  consumerGroup: string;
  topic: string;
  partition: number;
  offset: string;
  eventKey: string;
  eventId: string;
  eventType: string;
  envelope: Record<string, unknown>;
  correlationId: string | null;
  attemptCount: number;
  lastError: string;
  expiresAt: string;
  /** From this many dead-letterings of one event on, replay-all leaves it alone (the loop guard). */
  quarantineAfter: number;
}

/**
 * Dead-letters an event for a group. An event the group dead-lettered before (it failed again after
 * a retry) returns to pending with one more dead-lettering, its latest error and attempts, and is
 * quarantined once it reaches `quarantineAfter`; its first position and id stay.
 */
export function upsertDeadLetter(tx: DatabaseTransactionConnection, letter: NewDeadLetter): Promise<DeadLetterRow> {
  return tx.one(sql.type(deadLetterRow)`
    INSERT INTO event_dead_letters (id, tenant_id, consumer_group, topic, partition, "offset", event_key, event_id, event_type,
                                    envelope, correlation_id, attempt_count, last_error, expires_at, quarantined)
    VALUES (${letter.id}, ${letter.tenantId}, ${letter.consumerGroup}, ${letter.topic}, ${letter.partition}, ${letter.offset},
            ${letter.eventKey}, ${letter.eventId}, ${letter.eventType}, ${sql.jsonb(letter.envelope as Parameters<typeof sql.jsonb>[0])},
            ${letter.correlationId}, ${letter.attemptCount}, ${letter.lastError}, ${letter.expiresAt}, ${letter.quarantineAfter <= 1})
    ON CONFLICT ON CONSTRAINT event_dead_letters_once DO UPDATE SET
      status = 'pending',
      attempt_count = EXCLUDED.attempt_count,
      last_error = EXCLUDED.last_error,
      times_dead_lettered = event_dead_letters.times_dead_lettered + 1,
      quarantined = event_dead_letters.times_dead_lettered + 1 >= ${letter.quarantineAfter},
      expires_at = EXCLUDED.expires_at,
      resolved_at = NULL,
      updated_at = now()
    RETURNING ${columns}
  `);
}

/**
 * A redelivered event was handled by its group: its open dead letter (pending or retrying; a retry
 * may be redelivered before the operator's mark lands) is resolved. Null when there was none.
 */
export function resolveDeadLetter(
  tx: DatabaseTransactionConnection, tenantId: string, consumerGroup: string, eventId: string,
): Promise<DeadLetterRow | null> {
  return tx.maybeOne(sql.type(deadLetterRow)`
    UPDATE event_dead_letters SET status = 'resolved', resolved_at = now(), updated_at = now()
    WHERE tenant_id = ${tenantId} AND consumer_group = ${consumerGroup} AND event_id = ${eventId}
      AND status IN ('pending', 'retrying')
    RETURNING ${columns}
  `);
}

/** One dead letter, locked for a retry's decision (FOR UPDATE), or null. */
export function lockDeadLetter(tx: DatabaseTransactionConnection, tenantId: string, id: string): Promise<DeadLetterRow | null> {
  return tx.maybeOne(sql.type(deadLetterRow)`
    SELECT ${columns} FROM event_dead_letters WHERE tenant_id = ${tenantId} AND id = ${id} FOR UPDATE
  `);
}

/** The dead letters of one event (one per group that dead-lettered it), locked for a retry. */
export function lockDeadLettersOfEvent(
  tx: DatabaseTransactionConnection, tenantId: string, eventId: string,
): Promise<readonly DeadLetterRow[]> {
  return tx.any(sql.type(deadLetterRow)`
    SELECT ${columns} FROM event_dead_letters WHERE tenant_id = ${tenantId} AND event_id = ${eventId}
    ORDER BY dead_lettered_at, id FOR UPDATE
  `);
}

/** One dead letter of the tenant, or null (an unknown id, or another tenant's). */
export function selectDeadLetter(tx: DatabaseTransactionConnection, tenantId: string, id: string): Promise<DeadLetterRow | null> {
  return tx.maybeOne(sql.type(deadLetterRow)`
    SELECT ${columns} FROM event_dead_letters WHERE tenant_id = ${tenantId} AND id = ${id}
  `);
}

/** What the operator's list filters by (GET /integrations/dlq). */
export interface DeadLetterFilter {
  status?: DeadLetterStatus;
  consumerGroup?: string;
  eventType?: string;
}

/**
 * A list position: the last row of the previous page. `at` is dead_lettered_at to the microsecond
 * (the row's ISO time has milliseconds only, and a position cut to the millisecond would skip or
 * repeat rows dead-lettered within one).
 */
export interface DeadLetterKeyset {
  at: string;
  id: string;
}

export const listedDeadLetterRow = deadLetterRow.extend({ position: z.string() });
export type ListedDeadLetterRow = z.infer<typeof listedDeadLetterRow>;

/**
 * A page of the tenant's dead letters, newest first by (dead_lettered_at, id), on the
 * (tenant_id, status, dead_lettered_at, id) index when a status is asked for. The keyset is written
 * without a row comparison: under row-level security only leakproof operators reach an index
 * (docs/decisions/audit.md).
 */
export function selectDeadLetters(
  tx: DatabaseTransactionConnection, tenantId: string, filter: DeadLetterFilter, after: DeadLetterKeyset | undefined, limit: number,
): Promise<readonly ListedDeadLetterRow[]> {
  const conditions = [
    sql.fragment`tenant_id = ${tenantId}`,
    ...(filter.status ? [sql.fragment`status = ${filter.status}`] : []),
    ...(filter.consumerGroup ? [sql.fragment`consumer_group = ${filter.consumerGroup}`] : []),
    ...(filter.eventType ? [sql.fragment`event_type = ${filter.eventType}`] : []),
    ...(after
      ? [sql.fragment`dead_lettered_at <= ${after.at}::timestamptz
          AND (dead_lettered_at < ${after.at}::timestamptz OR id < ${after.id})`]
      : []),
  ];
  return tx.any(sql.type(listedDeadLetterRow)`
    SELECT ${columns}, to_char(dead_lettered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "position"
    FROM event_dead_letters
    WHERE ${sql.join(conditions, sql.fragment` AND `)}
    ORDER BY dead_lettered_at DESC, id DESC
    LIMIT ${limit}
  `);
}

/** Where replay-all is in a tenant's dead letters: after which id, and up to when they were dead-lettered. */
export interface ReplayWindow {
  /** The last id of the previous page (ids are UUID v7, so this is oldest first); null at the start. */
  after: string | null;
  /** Dead letters of later than this (ISO 8601) are not part of this replay. */
  through: string;
}

/**
 * The next page of replay-all (DLQReplayAll): pending dead letters that are not quarantined, oldest
 * first, locked until the caller's transaction marks them retrying. A concurrent retry of one of them
 * waits for that mark (and then re-sends it, as a retrying record may be).
 */
export function lockReplayPage(
  tx: DatabaseTransactionConnection, tenantId: string, window: ReplayWindow, limit: number,
): Promise<readonly DeadLetterRow[]> {
  return tx.any(sql.type(deadLetterRow)`
    SELECT ${columns} FROM event_dead_letters
    WHERE tenant_id = ${tenantId} AND status = 'pending' AND NOT quarantined
      AND dead_lettered_at <= ${window.through}::timestamptz
      ${window.after === null ? sql.fragment`` : sql.fragment`AND id > ${window.after}`}
    ORDER BY id
    LIMIT ${limit}
    FOR UPDATE
  `);
}

/**
 * How many of the tenant's dead letters in a stretch of replay-all's walk are resolved already
 * (DLQReplayAll's skipped_already_resolved): ids after `window.after`, up to `upTo` (the last id
 * of the page; null on the last page: to the end).
 */
export function countResolvedInReplay(
  tx: DatabaseTransactionConnection, tenantId: string, window: ReplayWindow, upTo: string | null,
): Promise<number> {
  return tx.oneFirst(sql.type(countRow)`
    SELECT count(*) AS count FROM event_dead_letters
    WHERE tenant_id = ${tenantId} AND status = 'resolved' AND dead_lettered_at <= ${window.through}::timestamptz
      ${window.after === null ? sql.fragment`` : sql.fragment`AND id > ${window.after}`}
      ${upTo === null ? sql.fragment`` : sql.fragment`AND id <= ${upTo}`}
  `);
}

/**
 * Marks dead letters re-published for their groups (pending → retrying), once Kafka acknowledged
 * the redelivery; one already retrying stays so, its updated_at the time of its latest redelivery.
 * A record resolved or expired meanwhile is left as it is (the callers hold the rows' locks, so it is not).
 */
export async function markDeadLettersRetrying(tx: DatabaseTransactionConnection, tenantId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(sql.unsafe`
    UPDATE event_dead_letters SET status = 'retrying', updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ANY(${sql.array(ids, 'uuid')}) AND status IN ('pending', 'retrying')
  `);
}

/**
 * The maintenance sweep's step (services/maintenance/expiry.ts), across every tenant on the owner's
 * pool: dead letters still open (pending or retrying) past their expires_at (EVENTS_DLQ_RETENTION_HOURS
 * after their last dead-lettering) become expired, and are no longer retried. Never deleted: the row
 * is the operator's record (migration 0033). One bounded batch per statement, skipping rows a retry
 * holds (the next run takes them); answers how many it expired.
 */
export async function expireDeadLetters(db: DatabasePool, limit: number): Promise<number> {
  return db.oneFirst(sql.type(expiredRow)`
    WITH due AS (
      SELECT id FROM event_dead_letters
      WHERE status IN ('pending', 'retrying') AND expires_at < now()
      ORDER BY expires_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), expired AS (
      UPDATE event_dead_letters d SET status = 'expired', updated_at = now()
      FROM due WHERE d.id = due.id
      RETURNING 1
    )
    SELECT count(*) AS expired FROM expired`);
}

/**
 * The transaction's time to the microsecond (ISO 8601, UTC): replay-all's cutoff, taken from the
 * database's clock, which wrote every dead_lettered_at it is compared with.
 */
export function transactionTime(tx: DatabaseTransactionConnection): Promise<string> {
  return tx.oneFirst(sql.type(nowRow)`
    SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS now
  `);
}

/**
 * Whether the group has dead-lettered the event (in any status). A group that reads the event again
 * without a redelivery header (a duplicate copy, or its offsets not committed before a crash) leaves
 * it to the dead-letter operations instead of failing it again and counting one more dead-lettering.
 */
export function hasDeadLetter(
  tx: DatabaseTransactionConnection, tenantId: string, consumerGroup: string, eventId: string,
): Promise<boolean> {
  return tx.exists(sql.unsafe`
    SELECT 1 FROM event_dead_letters WHERE tenant_id = ${tenantId} AND consumer_group = ${consumerGroup} AND event_id = ${eventId}
  `);
}
