import { Context } from '@temporalio/activity';
import { activityContext } from '../../common/temporal/activity-context';
import {
  startStrandedScans, type StagingSweepCounts, type StagingSweepDeps, type StagingSweepPage, type StagingSweepPageResult,
  type StagingSweepPosition, type StagingSweepScan,
} from '../../services/files/staging-sweep';

export type { StagingSweepCounts, StagingSweepPage, StagingSweepPageResult, StagingSweepPosition, StagingSweepScan };

/**
 * The staging sweep's activity (workflows/files/staging-sweep.workflow.ts): services/files/staging-sweep.ts,
 * looking up and starting the scan workflows through the worker's client (its interceptors label
 * each start with its tenant, as the gateway's do), heartbeating after each file.
 */
export function createFileStagingSweepActivities(deps: StagingSweepDeps) {
  return {
    async startStrandedScans(page: StagingSweepPage): Promise<StagingSweepPageResult> {
      const context = Context.current();
      return startStrandedScans(deps, context.client, page, activityContext().traceId, (done) => context.heartbeat(done));
    },
  };
}

export type FileStagingSweepActivities = ReturnType<typeof createFileStagingSweepActivities>;
