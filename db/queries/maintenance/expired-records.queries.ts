import { z } from 'zod';
import { sql, type DatabasePool } from '../../pool';

/**
 * Deletes of expired rows, one bounded batch per statement: a large backlog is worked off in short
 * transactions that never hold many locks. SKIP LOCKED passes over rows a request is using right now
 * (the next run takes them). Each statement answers how many rows it deleted, so the caller knows
 * when the backlog is gone (fewer than the limit).
 */
const deletedCount = z.object({ deleted: z.number().int().nonnegative() });

export async function deleteExpiredIdempotencyKeys(db: DatabasePool, limit: number): Promise<number> {
  const { deleted } = await db.one(sql.type(deletedCount)`
    WITH expired AS (
      SELECT tenant_id, scope, key FROM idempotency_keys
      WHERE expires_at < now()
      ORDER BY expires_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), deleted AS (
      DELETE FROM idempotency_keys k USING expired e
      WHERE (k.tenant_id, k.scope, k.key) = (e.tenant_id, e.scope, e.key)
      RETURNING 1
    )
    SELECT count(*) AS deleted FROM deleted`);
  return deleted;
}

export async function deleteExpiredOneTimeTokens(db: DatabasePool, limit: number): Promise<number> {
  const { deleted } = await db.one(sql.type(deletedCount)`
    WITH expired AS (
      SELECT id FROM one_time_tokens
      WHERE expires_at < now()
      ORDER BY expires_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), deleted AS (
      DELETE FROM one_time_tokens t USING expired e
      WHERE t.id = e.id
      RETURNING 1
    )
    SELECT count(*) AS deleted FROM deleted`);
  return deleted;
}
