import type { Logger } from '../../common/logger';
import type { Progress } from '../../common/progress';
import type { DatabasePool } from '../../db/pool';
import {
  deleteExpiredIdempotencyKeys, deleteExpiredOneTimeTokens, deleteExpiredRefreshTokenFamilies,
} from '../../db/queries/maintenance/expired-records.queries';
import { expireDeadLetters } from '../../db/queries/events/dead-letters.queries';

/**
 * The platform's expiry sweep: rows whose lifetime has ended, across every tenant, deleted by one
 * Schedule. It spans identity (one-time tokens, refresh-token families), the idempotency keys
 * every mutating route writes and the event bus's dead letters (expired, not deleted), so it has one
 * home under the name its Schedule, workflow, activity and queries already share (maintenance),
 * rather than being split across the domains it sweeps.
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
  /** Dead letters moved from pending or retrying to expired (they are kept, no longer retried). */
  deadLetters: number;
}

/** Repeats one bounded delete (or update) until a batch comes back short, reporting the running total. */
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
 * Deletes expired idempotency keys, one-time tokens and refresh-token families, and expires the dead
 * letters past their retention (docs/reference/events.md#rule-19: pending or retrying older than
 * EVENTS_DLQ_RETENTION_HOURS → expired). Safe to repeat as a whole: each step is idempotent, and a retry
 * simply finds less to do.
 */
export async function expireStaleRecords({ fleetPool, logger }: ExpiryDeps, batchSize: number, progress: Progress): Promise<ExpiredRecordCounts> {
  const idempotencyKeys = await deleteInBatches(() => deleteExpiredIdempotencyKeys(fleetPool, batchSize), batchSize, progress);
  const oneTimeTokens = await deleteInBatches(() => deleteExpiredOneTimeTokens(fleetPool, batchSize), batchSize, progress);
  const refreshTokenFamilies = await deleteInBatches(() => deleteExpiredRefreshTokenFamilies(fleetPool, batchSize), batchSize, progress);
  const deadLetters = await deleteInBatches(() => expireDeadLetters(fleetPool, batchSize), batchSize, progress);
  logger.info({ idempotencyKeys, oneTimeTokens, refreshTokenFamilies, deadLetters }, 'expired stale records');
  return { idempotencyKeys, oneTimeTokens, refreshTokenFamilies, deadLetters };
}
