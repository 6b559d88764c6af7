import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';
import type { EventEnvelope } from '../../../common/event-envelope';

/**
 * The fallback buffer of the direct intake path (migration 0003): the gateway (platform_app) may
 * only insert; the audit consumer (owner role) replays rows to Kafka and deletes them once sent.
 */

export interface BufferedAuditEvent {
  key: string;
  envelope: EventEnvelope;
}

export async function insertBufferedAuditEvents(db: CommonQueryMethods, events: readonly BufferedAuditEvent[]): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO audit_fallback_buffer (id, tenant_id, partition_key, envelope)
    SELECT * FROM ${sql.unnest(
    events.map(({ key, envelope }) => [envelope.id, envelope.tenantId, key, JSON.stringify(envelope)]),
    ['uuid', 'uuid', 'text', 'jsonb'],
  )}
  `);
}

const bufferedRow = z.object({
  key: z.string(),
  envelope: z.custom<EventEnvelope>((value) => typeof value === 'object' && value !== null, 'an event envelope'),
});

/**
 * The oldest rows, locked until the transaction ends and skipping rows another replayer holds, so
 * replayers in several consumer processes share the work instead of sending rows twice.
 */
export function claimBufferedAuditEvents(tx: DatabaseTransactionConnection, limit: number): Promise<readonly BufferedAuditEvent[]> {
  return tx.any(sql.type(bufferedRow)`
    SELECT partition_key AS key, envelope
    FROM audit_fallback_buffer
    ORDER BY buffered_at, id
    LIMIT ${limit}
    FOR UPDATE SKIP LOCKED
  `);
}

export async function deleteBufferedAuditEvents(tx: DatabaseTransactionConnection, ids: readonly string[]): Promise<void> {
  await tx.query(sql.unsafe`DELETE FROM audit_fallback_buffer WHERE id = ANY(${sql.array(ids, 'uuid')})`);
}

const bufferBacklog = z.object({ buffered: z.number(), oldestBufferedAt: z.string().nullable() });

export type AuditBufferBacklog = z.infer<typeof bufferBacklog>;

export function selectAuditBufferBacklog(db: CommonQueryMethods): Promise<AuditBufferBacklog> {
  return db.one(sql.type(bufferBacklog)`
    SELECT count(*)::int AS buffered, min(buffered_at) AS "oldestBufferedAt" FROM audit_fallback_buffer
  `);
}
