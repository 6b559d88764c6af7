import { z } from 'zod';
import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * The transactional outbox (table outbox_events, migration 0001). Rows are written in the caller's
 * transaction and read, stamped and finally deleted by the relay, which connects as the owner role
 * and so sees every tenant's rows (row-level security applies to platform_app only).
 */

export interface NewOutboxEvent {
  id: string;
  tenantId: string;
  /** A topic of the catalogue (services/events/topics.ts); the writer names it, the relay publishes to it. */
  topic: string;
  partitionKey: string;
  type: string;
  source: string;
  data: Record<string, unknown>;
  schemaVersion: string;
  traceId: string | null;
  correlationId: string | null;
}

/**
 * Outbox rows in one statement, however many; jsonb_to_recordset keeps it one parameter whatever
 * the count. Takes a transaction connection on purpose: an outbox row outside its business
 * transaction is a bug.
 */
export async function insertOutboxEvents(tx: DatabaseTransactionConnection, events: readonly NewOutboxEvent[]): Promise<void> {
  if (events.length > 0) await tx.query(sql.unsafe`${outboxInsert(events)}`);
}

/** An outbox row as jsonb for SQL to read back into outbox_events columns by name (jsonb_to_recordset, jsonb_populate_record). */
export function outboxRowColumns(event: NewOutboxEvent) {
  return {
    id: event.id, tenant_id: event.tenantId, topic: event.topic, partition_key: event.partitionKey, type: event.type,
    source: event.source, data: event.data, schema_version: event.schemaVersion, trace_id: event.traceId, correlation_id: event.correlationId,
  };
}

/**
 * The INSERT of outbox rows as a fragment, for a caller that sends it as a data-modifying CTE of
 * another write of the same transaction (services/idempotency/idempotent.ts: with the stored answer).
 */
export function outboxInsert(events: readonly NewOutboxEvent[]): FragmentSqlToken {
  const rows = events.map(outboxRowColumns);
  return sql.fragment`
    INSERT INTO outbox_events (id, tenant_id, topic, partition_key, type, source, data, schema_version, trace_id, correlation_id)
    SELECT e.id, e.tenant_id, e.topic, e.partition_key, e.type, e.source, e.data, e.schema_version, e.trace_id, e.correlation_id
    FROM jsonb_to_recordset(${sql.jsonb(rows)}) AS e (
      id uuid, tenant_id uuid, topic text, partition_key text, type text, source text, data jsonb,
      schema_version text, trace_id text, correlation_id text)
  `;
}

const pendingOutboxEvent = z.object({
  seq: z.number(),
  id: z.string(),
  tenantId: z.string(),
  topic: z.string(),
  partitionKey: z.string(),
  type: z.string(),
  source: z.string(),
  data: z.record(z.string(), z.unknown()),
  schemaVersion: z.string(),
  traceId: z.string().nullable(),
  correlationId: z.string().nullable(),
  occurredAt: z.string(),
});

export type PendingOutboxEvent = z.infer<typeof pendingOutboxEvent>;

const outboxEventColumns = sql.fragment`
  seq, id, tenant_id AS "tenantId", topic, partition_key AS "partitionKey", type, source, data,
  schema_version AS "schemaVersion", trace_id AS "traceId", correlation_id AS "correlationId", occurred_at AS "occurredAt"
`;

/**
 * The oldest unpublished rows in seq order. Selecting by `published_at IS NULL` rather than "after
 * the last seq seen" matters: a transaction that took its seq early but committed late is still found.
 */
export function selectPendingOutboxEvents(db: CommonQueryMethods, limit: number): Promise<readonly PendingOutboxEvent[]> {
  return db.any(sql.type(pendingOutboxEvent)`
    SELECT ${outboxEventColumns}
    FROM outbox_events
    WHERE published_at IS NULL
    ORDER BY seq
    LIMIT ${limit}
  `);
}

export async function markOutboxEventsPublished(db: CommonQueryMethods, seqs: readonly number[]): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE outbox_events SET published_at = now() WHERE seq = ANY(${sql.array(seqs, 'int8')})
  `);
}

const outboxBacklog = z.object({ pending: z.number(), oldestPendingAt: z.string().nullable() });

export type OutboxBacklog = z.infer<typeof outboxBacklog>;

export function selectOutboxBacklog(db: CommonQueryMethods): Promise<OutboxBacklog> {
  return db.one(sql.type(outboxBacklog)`
    SELECT count(*)::int AS pending, min(occurred_at) AS "oldestPendingAt"
    FROM outbox_events
    WHERE published_at IS NULL
  `);
}

/** Deletes at most `limit` rows published more than `retentionHours` ago; returns how many went. */
export async function deletePublishedOutboxEvents(db: CommonQueryMethods, retentionHours: number, limit: number): Promise<number> {
  const result = await db.query(sql.unsafe`
    DELETE FROM outbox_events
    WHERE seq IN (
      SELECT seq FROM outbox_events
      WHERE published_at < now() - make_interval(hours => ${retentionHours})
      ORDER BY published_at
      LIMIT ${limit}
    )
  `);
  return result.rowCount;
}

/**
 * One tenant's rows still in the outbox, published or not (published rows stay for the retention
 * period), in seq order: what an operator or a test replays by hand.
 */
export function selectOutboxEventsOfTenant(db: CommonQueryMethods, tenantId: string): Promise<readonly PendingOutboxEvent[]> {
  return db.any(sql.type(pendingOutboxEvent)`
    SELECT ${outboxEventColumns}
    FROM outbox_events
    WHERE tenant_id = ${tenantId}
    ORDER BY seq
  `);
}
