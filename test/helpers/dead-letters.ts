import { z } from 'zod';
import { newId } from '../../common/ids';
import { sql, type DatabasePool } from '../../db/pool';
import { selectDeadLetter, upsertDeadLetter, type DeadLetterRow, type DeadLetterStatus } from '../../db/queries/events/dead-letters.queries';
import { topics } from '../../services/events/topics';

/**
 * Dead letters for the tests of their operation, written as a consumer group writes them
 * (upsertDeadLetter), on the owner's pool, so these tests need no consumer running.
 */

export interface SeedOptions {
  /** Another group's dead letter of the same event: its id. */
  eventId?: string;
  consumerGroup?: string;
  type?: string;
  data?: Record<string, unknown>;
  /** Moved there after the insert, as the consumer, a retry or the expiry sweep would. */
  status?: DeadLetterStatus;
  quarantined?: boolean;
  correlationId?: string | null;
  traceId?: string | null;
  /** Hours until it expires (default 168); negative: past its retention already. */
  expiresInHours?: number;
}

export async function seedDeadLetter(owner: DatabasePool, tenantId: string, options: SeedOptions = {}): Promise<DeadLetterRow> {
  const eventId = options.eventId ?? newId();
  const entityId = newId();
  const type = options.type ?? 'crm.contact.created';
  const envelope = {
    id: eventId, type, source: type.split('.')[0], tenantId, data: options.data ?? { id: entityId, firstName: 'Ada' },
    schemaVersion: '1.0.0', timestamp: new Date().toISOString(), traceId: options.traceId === undefined ? 'a'.repeat(32) : options.traceId,
  };
  const row = await owner.transaction((tx) => upsertDeadLetter(tx, {
    id: newId(), tenantId, consumerGroup: options.consumerGroup ?? 'crm.contacts-sync', topic: topics.data.name,
    partition: 2, offset: '41', eventKey: entityId, eventId, eventType: type, envelope,
    correlationId: options.correlationId === undefined ? `corr-${eventId}` : options.correlationId,
    attemptCount: 5, lastError: 'handler failed: boom',
    expiresAt: new Date(Date.now() + (options.expiresInHours ?? 168) * 3_600_000).toISOString(), quarantineAfter: 3,
  }));
  if (options.status === undefined && options.quarantined === undefined) return row;
  const status = options.status ?? row.status;
  return owner.transaction(async (tx) => {
    await tx.query(sql.unsafe`
      UPDATE event_dead_letters SET status = ${status}, quarantined = ${options.quarantined ?? row.quarantined},
        resolved_at = CASE WHEN ${status} = 'resolved' THEN now() END
      WHERE id = ${row.id}
    `);
    return (await selectDeadLetter(tx, tenantId, row.id))!;
  });
}

const stateRow = z.object({ status: z.string(), updatedAt: z.string(), quarantined: z.boolean() });

/** A dead letter's state as the owner reads it. */
export function deadLetterState(owner: DatabasePool, id: string): Promise<z.infer<typeof stateRow>> {
  return owner.one(sql.type(stateRow)`
    SELECT status, updated_at::text AS "updatedAt", quarantined FROM event_dead_letters WHERE id = ${id}
  `);
}
