import type { CommonQueryMethods } from 'slonik';
import type { Logger } from '../../common/logger';
import { removeObjects, type ObjectStore } from '../../common/object-store';
import type { DatabasePool } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import {
  deleteTenantIdempotencyKeys, deleteTenantOneTimeTokens, markTenantDeleted, markTerminationRecovered,
  recordTerminationProgress, restoreTenant, revokeTenantSessions, selectTerminationProgress, setTerminationPhase,
  startTerminationRecord, type TerminationPhase,
} from '../../db/queries/billing/termination.queries';

/**
 * The steps of a tenant's termination (docs/reference/billing.md#rule-27) as its workflow runs them: the
 * soft delete, the records and files phases with their checkpoints, completion and recovery. The
 * gateway's side (status, the recover request) is termination.ts.
 */

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

export interface TerminationStepDeps {
  /**
   * The application role (row-level security applies): each statement runs in the terminated
   * tenant's own transaction and names it, so a termination can reach no other tenant's rows.
   */
  appPool: DatabasePool;
  objectStore: ObjectStore;
  logger: Logger;
  /** Rows or objects handled per batch (BILLING_TERMINATION_BATCH_SIZE). */
  batchSize: number;
  /** The record steps, in order (RECORD_STEPS; tests fail one midway). */
  recordSteps: readonly RecordStep[];
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

/** Told of every saved checkpoint; the activity heartbeats it (which also delivers a cancellation). */
export type CheckpointSaved = (progress: RecordsProgress | FilesProgress) => void;

/** One statement of the termination, in the tenant's transaction. */
function inTenant<T>(deps: TerminationStepDeps, tenantId: string, work: (db: CommonQueryMethods) => Promise<T>): Promise<T> {
  return withTenant(deps.appPool, tenantId, work);
}

/** The phase's last checkpoint, from the read model (written after every batch). */
async function checkpointOf<T>(deps: TerminationStepDeps, tenantId: string, phase: 'records' | 'files'): Promise<T | undefined> {
  return (await inTenant(deps, tenantId, (db) => selectTerminationProgress(db, tenantId)))?.[phase] as T | undefined;
}

async function saveCheckpoint(
  deps: TerminationStepDeps, tenantId: string, phase: 'records' | 'files', progress: RecordsProgress | FilesProgress, saved: CheckpointSaved,
): Promise<void> {
  await inTenant(deps, tenantId, (db) => recordTerminationProgress(db, tenantId, { [phase]: progress }));
  saved(progress);
}

/** Starts the read model and soft-deletes the tenant itself (it leaves its members' tenant lists). */
export async function beginTermination(deps: TerminationStepDeps, tenantId: string, startedAt: string): Promise<void> {
  await inTenant(deps, tenantId, async (db) => {
    await startTerminationRecord(db, tenantId, startedAt);
    await markTenantDeleted(db, tenantId);
  });
  deps.logger.info({ tenantId, startedAt }, 'tenant termination started');
}

export async function enterTerminationPhase(deps: TerminationStepDeps, tenantId: string, phase: TerminationPhase): Promise<void> {
  await inTenant(deps, tenantId, (db) => setTerminationPhase(db, tenantId, phase));
  deps.logger.info({ tenantId, phase }, 'tenant termination phase');
}

/**
 * deleting_records: runs each record step in batches until it finds nothing left. Resumes from
 * the last checkpoint: finished steps are not run again and counts keep adding up.
 */
export async function deleteTenantRecords(deps: TerminationStepDeps, tenantId: string, saved: CheckpointSaved): Promise<RecordsProgress> {
  const { batchSize, recordSteps: steps } = deps;
  const earlier = await checkpointOf<RecordsProgress>(deps, tenantId, 'records');
  const progress: RecordsProgress = earlier ? { ...earlier, counts: { ...earlier.counts } } : { step: 0, counts: {}, done: false };
  for (; progress.step < steps.length; progress.step += 1) {
    const step = steps[progress.step];
    for (;;) {
      const changed = await inTenant(deps, tenantId, (db) => step.runBatch(db, tenantId, batchSize));
      progress.counts[step.name] = (progress.counts[step.name] ?? 0) + changed;
      await saveCheckpoint(deps, tenantId, 'records', progress, saved);
      if (changed < batchSize) break;
    }
  }
  progress.done = true;
  await saveCheckpoint(deps, tenantId, 'records', progress, saved);
  return progress;
}

/**
 * deleting_files: removes the tenant's objects (every key under `{tenantId}/` except the audit
 * archive) a batch at a time, in key order, from the last key handled. Removing an object that
 * is already gone succeeds, so a batch repeated after a crash does no harm.
 */
export async function deleteTenantFiles(deps: TerminationStepDeps, tenantId: string, saved: CheckpointSaved): Promise<FilesProgress> {
  const { objectStore, batchSize } = deps;
  const prefix = `${tenantId}/`;
  const progress: FilesProgress = await checkpointOf<FilesProgress>(deps, tenantId, 'files') ?? { deleted: 0, kept: 0, afterKey: '', done: false };
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
    await saveCheckpoint(deps, tenantId, 'files', progress, saved);
  }
  progress.done = true;
  await saveCheckpoint(deps, tenantId, 'files', progress, saved);
  return progress;
}

export async function completeTermination(deps: TerminationStepDeps, tenantId: string): Promise<void> {
  await inTenant(deps, tenantId, (db) => setTerminationPhase(db, tenantId, 'completed'));
  deps.logger.info({ tenantId }, 'tenant termination completed');
}

/** Undoes the soft delete of the tenant and marks the termination recovered. */
export async function recoverTenant(deps: TerminationStepDeps, tenantId: string): Promise<void> {
  await inTenant(deps, tenantId, async (db) => {
    await restoreTenant(db, tenantId);
    await markTerminationRecovered(db, tenantId);
  });
  deps.logger.info({ tenantId }, 'tenant recovered from termination');
}
