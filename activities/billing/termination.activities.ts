import { Context, heartbeat } from '@temporalio/activity';
import { config, type Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import type { ObjectStore } from '../../common/object-store';
import type { DatabasePool } from '../../db/pool';
import type { TerminationPhase } from '../../db/queries/billing/termination.queries';
import {
  beginTermination, completeTermination, deleteTenantFiles, deleteTenantRecords, enterTerminationPhase, recoverTenant,
  RECORD_STEPS, type FilesProgress, type RecordsProgress, type RecordStep, type TerminationStepDeps,
} from '../../services/billing/termination-steps';

export interface TerminationDeps {
  /** The application role: each statement runs in the terminated tenant's own transaction. */
  appPool: DatabasePool;
  objectStore: ObjectStore;
  logger: Logger;
  /** BILLING_TERMINATION_*; the process configuration when not given. */
  billingLimits?: Pick<Config['billingLimits'], 'terminationPhaseHours' | 'terminationBatchSize'>;
  /** Replaces RECORD_STEPS (tests use it to fail a phase midway). */
  recordSteps?: readonly RecordStep[];
}

/**
 * A saved checkpoint is the heartbeat, which also delivers a cancellation: a phase canceled by its
 * workflow stops at the next batch, its progress saved.
 */
function heartbeatCheckpoint(progress: RecordsProgress | FilesProgress): void {
  heartbeat(progress);
  Context.current().cancellationSignal.throwIfAborted();
}

/** The termination workflow's activities: services/billing/termination-steps.ts. */
export function createTerminationActivities({ appPool, objectStore, logger, billingLimits, recordSteps }: TerminationDeps) {
  const settings = billingLimits ?? config().billingLimits;
  const deps: TerminationStepDeps = {
    appPool, objectStore, logger, batchSize: settings.terminationBatchSize, recordSteps: recordSteps ?? RECORD_STEPS,
  };

  return {
    /** Also answers the configured length of a phase, which the workflow cannot read itself. */
    async beginTermination(tenantId: string, startedAt: string): Promise<{ phaseMs: number }> {
      await beginTermination(deps, tenantId, startedAt);
      return { phaseMs: settings.terminationPhaseHours * 3_600_000 };
    },

    async enterTerminationPhase(tenantId: string, phase: TerminationPhase): Promise<void> {
      await enterTerminationPhase(deps, tenantId, phase);
    },

    async deleteTenantRecords(tenantId: string): Promise<RecordsProgress> {
      return deleteTenantRecords(deps, tenantId, heartbeatCheckpoint);
    },

    async deleteTenantFiles(tenantId: string): Promise<FilesProgress> {
      return deleteTenantFiles(deps, tenantId, heartbeatCheckpoint);
    },

    async completeTermination(tenantId: string): Promise<void> {
      await completeTermination(deps, tenantId);
    },

    async recoverTenant(tenantId: string): Promise<void> {
      await recoverTenant(deps, tenantId);
    },
  };
}

export type TerminationActivities = ReturnType<typeof createTerminationActivities>;
