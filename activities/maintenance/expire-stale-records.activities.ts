import { heartbeat } from '@temporalio/activity';
import { expireStaleRecords, type ExpiredRecordCounts, type ExpiryDeps } from '../../services/maintenance/expiry';

export type { ExpiredRecordCounts };

/** The maintenance Schedule's activity: services/maintenance/expiry.ts, heartbeating the running totals. */
export function createMaintenanceActivities(deps: ExpiryDeps) {
  return {
    async expireStaleRecords(batchSize: number): Promise<ExpiredRecordCounts> {
      return expireStaleRecords(deps, batchSize, heartbeat);
    },
  };
}

export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;
