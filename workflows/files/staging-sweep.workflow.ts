import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type {
  FileStagingSweepActivities, StagingSweepCounts, StagingSweepPosition, StagingSweepScan,
} from '../../activities/files/staging-sweep.activities';

/** A page is a query and up to batchSize look-ups in Temporal: seconds. Retries are bounded; the next run takes over. */
const sweeping = proxyActivities<FileStagingSweepActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

const MINUTE_MS = 60_000;

export interface FilesStagingSweepInput {
  /** FILES_STAGING_SWEEP_GRACE_MINUTES: a file recorded less long ago may still be in its upload's hands. */
  graceMinutes: number;
  /** Files per page (one activity). */
  batchSize: number;
  /** Pages per run at most; a run that stops there hands its position to the next (its result's `next`). */
  maxBatches: number;
  /** How the scans are started: the gateway's settings (FILES_STAGING_TTL_HOURS, NOTIFY_TASK_QUEUE) and FILES_TASK_QUEUE. */
  scan: StagingSweepScan;
  /** Only this tenant: an operator's run for one tenant (and the tests'); every tenant when absent. */
  tenantId?: string;
  /** The run's clock (ISO 8601), for the tests, which pin it as the orphan sweep's do; the workflow's time when absent. */
  asOf?: string;
}

export interface FilesStagingSweepResult extends StagingSweepCounts {
  /** Where the next run starts: the last file this run looked at when it stopped at maxBatches, else null (from the oldest). */
  next: StagingSweepPosition | null;
}

/** Where the previous run of the Schedule stopped (its last completion result), if it stopped at its bound. */
function previousPosition(): StagingSweepPosition | null {
  const next = (workflowInfo().lastResult as Partial<FilesStagingSweepResult> | undefined)?.next;
  return typeof next?.createdAt === 'string' && typeof next.id === 'string' ? next : null;
}

/**
 * The staging sweep (docs/decisions/files.md, Staging sweep), started every
 * FILES_STAGING_SWEEP_MINUTES by the Schedule `files.staging-sweep`: starts the scan workflow of
 * every pending_scan file recorded more than graceMinutes ago that has none (its gateway stopped
 * between recording it and starting its scan), page by page, oldest first, at most maxBatches pages
 * a run; a run that stops there leaves its position to the next, so a long queue of files whose
 * scans run cannot hide a later file for good. Returns what it looked at and what it started.
 */
export async function filesStagingSweep(input: FilesStagingSweepInput): Promise<FilesStagingSweepResult> {
  const asOf = input.asOf === undefined ? Date.now() : Date.parse(input.asOf);
  const createdBefore = new Date(asOf - input.graceMinutes * MINUTE_MS).toISOString();
  const totals: StagingSweepCounts = { inspected: 0, started: 0, running: 0, closed: 0 };
  let after = previousPosition();
  for (let batch = 0; batch < input.maxBatches; batch += 1) {
    const page = await sweeping.startStrandedScans({
      createdBefore, after, limit: input.batchSize, tenantId: input.tenantId ?? null, scan: input.scan,
    });
    totals.inspected += page.inspected;
    totals.started += page.started;
    totals.running += page.running;
    totals.closed += page.closed;
    after = page.next;
    if (after === null) break;
  }
  return { ...totals, next: after };
}
