import { Context, heartbeat } from '@temporalio/activity';
import type { CommonQueryMethods } from 'slonik';
import { config, type Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import { removeObjects, type ObjectStore } from '../../common/object-store';
import type { DatabasePool } from '../../db/pool';
import {
  deleteTenantIdempotencyKeys, deleteTenantOneTimeTokens, markTenantDeleted, markTerminationRecovered,
  recordTerminationProgress, restoreTenant, revokeTenantSessions, selectTerminationProgress, setTerminationPhase,
  startTerminationRecord, type TerminationPhase,
} from '../../db/queries/billing/termination.queries';

/**
 * One kind of tenant-owned row the records phase removes: a bounded statement that answers how
 * many rows it changed, repeated until it changes none. Each must be idempotent (it acts on what is
 * left), so a phase resumed after a crash simply continues. Domains that keep tenant data add theirs
 * to RECORD_STEPS (data-layer records, file rows, wallets as their retention rules allow).
 */
export interface RecordStep {
  name: string;
  runBatch(db: CommonQueryMethods, tenantId: string, limit: number): Promise<number>;
}

export const RECORD_STEPS: readonly RecordStep[] = [
  { name: 'sessions', runBatch: revokeTenantSessions },
  { name: 'oneTimeTokens', runBatch: deleteTenantOneTimeTokens },
  { name: 'idempotencyKeys', runBatch: deleteTenantIdempotencyKeys },
];

/** Objects under these prefixes (after `{tenantId}/`) are kept: the audit archive has its own retention. */
const KEPT_PREFIXES = ['audit/'];

export interface TerminationDeps {
  /** The owner role: termination works on one tenant's rows without being that tenant. */
  ownerPool: DatabasePool;
  objectStore: ObjectStore;
  logger: Logger;
  /** BILLING_TERMINATION_*; the process configuration when not given. */
  billingLimits?: Pick<Config['billingLimits'], 'terminationPhaseHours' | 'terminationBatchSize'>;
  /** Replaces RECORD_STEPS (tests use it to fail a phase midway). */
  recordSteps?: readonly RecordStep[];
}

/** What the records phase has done, per step, and the step it is in: its checkpoint. */
export interface RecordsProgress {
  step: number;
  counts: Record<string, number>;
  done: boolean;
}

/** What the files phase has done: objects removed and the last key it handled (its checkpoint). */
export interface FilesProgress {
  deleted: number;
  kept: number;
  afterKey: string;
  done: boolean;
}

export function createTerminationActivities(deps: TerminationDeps) {
  const { ownerPool, objectStore, logger } = deps;
  const settings = deps.billingLimits ?? config().billingLimits;
  const batchSize = settings.terminationBatchSize;
  const steps = deps.recordSteps ?? RECORD_STEPS;

  /** The phase's last checkpoint, from the read model (written after every batch). */
  async function checkpointOf<T>(tenantId: string, phase: 'records' | 'files'): Promise<T | undefined> {
    return (await selectTerminationProgress(ownerPool, tenantId))?.[phase] as T | undefined;
  }

  /** Saves a checkpoint and reports it as the heartbeat (which also delivers a cancellation). */
  async function checkpoint(tenantId: string, phase: 'records' | 'files', progress: RecordsProgress | FilesProgress): Promise<void> {
    await recordTerminationProgress(ownerPool, tenantId, { [phase]: progress });
    heartbeat(progress);
    Context.current().cancellationSignal.throwIfAborted();
  }

  return {
    /**
     * Starts the read model and soft-deletes the tenant itself (it leaves its members' tenant lists),
     * and answers the configured length of a phase, which the workflow cannot read itself.
     */
    async beginTermination(tenantId: string, startedAt: string): Promise<{ phaseMs: number }> {
      await startTerminationRecord(ownerPool, tenantId, startedAt);
      await markTenantDeleted(ownerPool, tenantId);
      logger.info({ tenantId, startedAt }, 'tenant termination started');
      return { phaseMs: settings.terminationPhaseHours * 3_600_000 };
    },

    async enterTerminationPhase(tenantId: string, phase: TerminationPhase): Promise<void> {
      await setTerminationPhase(ownerPool, tenantId, phase);
      logger.info({ tenantId, phase }, 'tenant termination phase');
    },

    /**
     * deleting_records: runs each record step in batches until it finds nothing left. Resumes from
     * the last checkpoint: finished steps are not run again and counts keep adding up.
     */
    async deleteTenantRecords(tenantId: string): Promise<RecordsProgress> {
      const saved = await checkpointOf<RecordsProgress>(tenantId, 'records');
      const progress: RecordsProgress = saved ? { ...saved, counts: { ...saved.counts } } : { step: 0, counts: {}, done: false };
      for (; progress.step < steps.length; progress.step += 1) {
        const step = steps[progress.step];
        for (;;) {
          const changed = await step.runBatch(ownerPool, tenantId, batchSize);
          progress.counts[step.name] = (progress.counts[step.name] ?? 0) + changed;
          await checkpoint(tenantId, 'records', progress);
          if (changed < batchSize) break;
        }
      }
      progress.done = true;
      await checkpoint(tenantId, 'records', progress);
      return progress;
    },

    /**
     * deleting_files: removes the tenant's objects (every key under `{tenantId}/` except the audit
     * archive) a batch at a time, in key order, from the last key handled. Removing an object that
     * is already gone succeeds, so a batch repeated after a crash does no harm.
     */
    async deleteTenantFiles(tenantId: string): Promise<FilesProgress> {
      const prefix = `${tenantId}/`;
      const saved = await checkpointOf<FilesProgress>(tenantId, 'files');
      const progress: FilesProgress = saved ?? { deleted: 0, kept: 0, afterKey: '', done: false };
      for (;;) {
        const batch: string[] = [];
        let listed = 0;
        const listing = objectStore.s3.listObjectsV2(objectStore.bucket, prefix, true, progress.afterKey || undefined);
        for await (const item of listing as AsyncIterable<{ name?: string }>) {
          if (!item.name) continue;
          listed += 1;
          progress.afterKey = item.name;
          if (KEPT_PREFIXES.some((kept) => item.name!.startsWith(prefix + kept))) progress.kept += 1;
          else batch.push(item.name);
          if (listed >= batchSize) break;
        }
        (listing as unknown as { destroy?: () => void }).destroy?.();
        await removeObjects(objectStore, batch);
        progress.deleted += batch.length;
        if (listed < batchSize) break;
        await checkpoint(tenantId, 'files', progress);
      }
      progress.done = true;
      await checkpoint(tenantId, 'files', progress);
      return progress;
    },

    async completeTermination(tenantId: string): Promise<void> {
      await setTerminationPhase(ownerPool, tenantId, 'completed');
      logger.info({ tenantId }, 'tenant termination completed');
    },

    /** Undoes the soft delete of the tenant and marks the termination recovered. */
    async recoverTenant(tenantId: string): Promise<void> {
      await restoreTenant(ownerPool, tenantId);
      await markTerminationRecovered(ownerPool, tenantId);
      logger.info({ tenantId }, 'tenant recovered from termination');
    },
  };
}

export type TerminationActivities = ReturnType<typeof createTerminationActivities>;
