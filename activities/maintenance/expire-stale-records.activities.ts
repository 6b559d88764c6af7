import { heartbeat } from '@temporalio/activity';
import type { DatabasePool } from '../../db/pool';
import { deleteExpiredIdempotencyKeys, deleteExpiredOneTimeTokens, deleteExpiredRefreshTokenFamilies } from '../../db/queries/maintenance/expired-records.queries';
import type { Logger } from '../../common/logger';

export interface MaintenanceDeps {
  /**
   * The owner role's pool. Expiry is system work across every tenant: the application role sees only
   * the tenant of its transaction (row-level security), while the table owner is not subject to it.
   */
  ownerPool: DatabasePool;
  logger: Logger;
}

export interface ExpiredRecordCounts {
  idempotencyKeys: number;
  oneTimeTokens: number;
  refreshTokenFamilies: number;
}

export function createMaintenanceActivities({ ownerPool, logger }: MaintenanceDeps) {
  /** Repeats one bounded delete until a batch comes back short, heartbeating the running total. */
  async function deleteInBatches(deleteBatch: () => Promise<number>, batchSize: number): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await deleteBatch();
      total += deleted;
      heartbeat(total);
      if (deleted < batchSize) return total;
    }
  }

  return {
    /**
     * Deletes expired idempotency keys, one-time tokens and refresh-token families. Safe to retry as a whole: deleting what
     * has expired is idempotent, and a retry simply finds less to delete.
     */
    async expireStaleRecords(batchSize: number): Promise<ExpiredRecordCounts> {
      const idempotencyKeys = await deleteInBatches(() => deleteExpiredIdempotencyKeys(ownerPool, batchSize), batchSize);
      const oneTimeTokens = await deleteInBatches(() => deleteExpiredOneTimeTokens(ownerPool, batchSize), batchSize);
      const refreshTokenFamilies = await deleteInBatches(() => deleteExpiredRefreshTokenFamilies(ownerPool, batchSize), batchSize);
      logger.info({ idempotencyKeys, oneTimeTokens, refreshTokenFamilies }, 'expired stale records');
      return { idempotencyKeys, oneTimeTokens, refreshTokenFamilies };
    },
  };
}

export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;
