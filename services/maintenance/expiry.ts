import type { Logger } from '../../common/logger';
import type { Progress } from '../../common/progress';
import type { DatabasePool } from '../../db/pool';
import {
  deleteExpiredIdempotencyKeys, deleteExpiredOneTimeTokens, deleteExpiredRefreshTokenFamilies,
} from '../../db/queries/maintenance/expired-records.queries';

/**
 * The platform's expiry sweep: rows whose lifetime has ended, across every tenant, deleted by one
 * Schedule. It spans identity (one-time tokens, refresh-token families) and the idempotency keys
 * every mutating route writes, so it has one home under the name its Schedule, workflow, activity
 * and queries already share (maintenance), rather than being split across the domains it sweeps.
 */
export interface ExpiryDeps {
  /**
   * The owner role's pool. Expiry is system work across every tenant: the application role sees only
   * the tenant of its transaction (row-level security), while the table owner is not subject to it.
   */
  fleetPool: DatabasePool;
  logger: Logger;
}

export interface ExpiredRecordCounts {
  idempotencyKeys: number;
  oneTimeTokens: number;
  refreshTokenFamilies: number;
}

/** Repeats one bounded delete until a batch comes back short, reporting the running total. */
async function deleteInBatches(deleteBatch: () => Promise<number>, batchSize: number, progress: Progress): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch();
    total += deleted;
    progress(total);
    if (deleted < batchSize) return total;
  }
}

/**
 * Deletes expired idempotency keys, one-time tokens and refresh-token families. Safe to repeat as a
 * whole: deleting what has expired is idempotent, and a retry simply finds less to delete.
 */
export async function expireStaleRecords({ fleetPool, logger }: ExpiryDeps, batchSize: number, progress: Progress): Promise<ExpiredRecordCounts> {
  const idempotencyKeys = await deleteInBatches(() => deleteExpiredIdempotencyKeys(fleetPool, batchSize), batchSize, progress);
  const oneTimeTokens = await deleteInBatches(() => deleteExpiredOneTimeTokens(fleetPool, batchSize), batchSize, progress);
  const refreshTokenFamilies = await deleteInBatches(() => deleteExpiredRefreshTokenFamilies(fleetPool, batchSize), batchSize, progress);
  logger.info({ idempotencyKeys, oneTimeTokens, refreshTokenFamilies }, 'expired stale records');
  return { idempotencyKeys, oneTimeTokens, refreshTokenFamilies };
}
