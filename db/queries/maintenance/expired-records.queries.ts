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

/**
 * Refresh tokens go by family: a rotated token points at its successor (replaced_by), so a family
 * is deleted whole, in one statement, once every token in it has expired; until then its rotated
 * tokens still serve reuse detection. A day's grace keeps a token that has just expired answering
 * 401 token-expired (not a bare 401) to a client that comes back late. Answers how many families
 * it deleted.
 */
export async function deleteExpiredRefreshTokenFamilies(db: DatabasePool, limit: number): Promise<number> {
  const { deleted } = await db.one(sql.type(deletedCount)`
    WITH expired AS (
      SELECT DISTINCT r.family_id FROM refresh_tokens r
      WHERE r.expires_at < now() - interval '1 day'
        AND NOT EXISTS (SELECT 1 FROM refresh_tokens l WHERE l.family_id = r.family_id AND l.expires_at >= now() - interval '1 day')
      LIMIT ${limit}
    ), deleted AS (
      DELETE FROM refresh_tokens t USING expired e
      WHERE t.family_id = e.family_id
      RETURNING t.family_id
    )
    SELECT count(DISTINCT family_id) AS deleted FROM deleted`);
  return deleted;
}
