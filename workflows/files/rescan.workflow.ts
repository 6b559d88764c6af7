import { continueAsNew, ParentClosePolicy, proxyActivities, startChild, workflowInfo } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { FileRescanActivities } from '../../activities/files/rescan.activities';
import type { FileScanActivities } from '../../activities/files/scan.activities';
import { mailNotice } from '../notify/mail-notice';
import { rescanInfectedFileNotice } from './notices';
import {
  fileRescanWorkflowId, type FileRescanCheckInput, type FileRescanCheckResult, type FileRescanInput, type FileRescanResult,
  type RescanTotals,
} from './rescan.messages';

/** As the scan pipeline: infrastructure is waited for (1 s doubling to 1 min apart), never given up on. */
const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' } as const;

/**
 * A page reads up to pageSize objects at the throttled pace, each up to 50 MB through clamd: minutes.
 * It heartbeats after every file and every 10 s, so a lost worker shows within 30 s.
 */
const scanning = proxyActivities<FileRescanActivities>({ startToCloseTimeout: '30 minutes', heartbeatTimeout: '30 seconds', retry });
const steps = proxyActivities<FileRescanActivities & Pick<FileScanActivities, 'tenantAdminEmails'>>({ startToCloseTimeout: '30 seconds', retry });

const DAY_MS = 86_400_000;
/** Files per page (one activity) and per run (then continue-as-new: about 10 pages, a few dozen events). */
const PAGE_SIZE = 100;
const FILES_PER_RUN = 1000;
/**
 * The re-scan runs at the lowest task priority (Temporal's keys go from 1, first, to 5, last), so
 * on a shared files task queue the scans of new uploads go before it where the server orders by
 * priority (docs/decisions/files.md, Scan priority). Its activities inherit it.
 */
const RESCAN_PRIORITY_KEY = 5;

const EMPTY_TOTALS: RescanTotals = { scanned: 0, skipped: 0, rejected: 0 };

/**
 * The re-scan of one signature version, under the workflow id `files.rescan:<signatureVersion>`:
 * pages through the files stored in its window (every tenant's, tenant by tenant), each object
 * scanned again by clamd at the configured pace. A file now found infected is rejected (its objects
 * removed, its bytes released, audit files.file.rejected) and its tenant's owners and admins are
 * mailed, one mail per address and file ever (the scan pipeline's key). After filesPerRun files it
 * continues as new with its cursor and totals, so its history stays small however many files there are.
 */
export async function fileRescan(input: FileRescanInput): Promise<FileRescanResult> {
  const totals = { ...(input.totals ?? EMPTY_TOTALS) };
  let after = input.after ?? null;
  let looked = 0;
  for (;;) {
    const page = await scanning.rescanFiles({ window: input.window, after, limit: input.pageSize, perSecond: input.perSecond });
    totals.scanned += page.scanned;
    totals.skipped += page.skipped;
    for (const { tenantId, fileId, signatures } of page.infected) {
      const outcome = await steps.rejectRescannedFile({ tenantId, fileId }, { signatures, signatureVersion: input.signatureVersion });
      // Rejected by this step (or by an earlier attempt of it): mailed under the key of the file, once per address.
      if (outcome.status !== 'rejected' || !outcome.reason?.startsWith('infected:')) continue;
      totals.rejected += 1;
      const notice = rescanInfectedFileNotice(fileId, outcome.originalName, signatures);
      await mailNotice(`files:${tenantId}:infected:${fileId}`, await steps.tenantAdminEmails(tenantId), input.notifyTaskQueue, notice);
    }
    if (!page.next) return { signatureVersion: input.signatureVersion, ...totals };
    after = page.next;
    looked += page.scanned + page.skipped;
    if (looked >= input.filesPerRun) return continueAsNew<typeof fileRescan>({ ...input, after, totals });
  }
}

/** The previous check's result, as the Schedule hands it over (none on a schedule's first run). */
function previousCheck(): FileRescanCheckResult | undefined {
  const last = workflowInfo().lastResult as Partial<FileRescanCheckResult> | undefined;
  return typeof last?.signatureVersion === 'string' ? last as FileRescanCheckResult : undefined;
}

/**
 * The Schedule's check (every FILES_RESCAN_CHECK_MINUTES, workers/schedules.ts): asks clamd for its
 * signature version and compares it with the one the previous check saw (the Schedule's last
 * completion result). The first check only records the version: the files stored before were scanned
 * with it. A different version starts its re-scan, abandoned to run on its own, over the files created
 * in the last windowDays; one re-scan per version, ever (reuse policy REJECT_DUPLICATE), so a check
 * repeated after its start finds it started.
 */
export async function fileRescanCheck(input: FileRescanCheckInput): Promise<FileRescanCheckResult> {
  const signatureVersion = await steps.clamdSignatureVersion();
  const previousSignatureVersion = previousCheck()?.signatureVersion ?? null;
  if (previousSignatureVersion === null || previousSignatureVersion === signatureVersion) {
    return { signatureVersion, previousSignatureVersion, rescanWorkflowId: null };
  }

  const until = Date.now();
  const workflowId = fileRescanWorkflowId(signatureVersion);
  const args: [FileRescanInput] = [{
    signatureVersion,
    window: { since: new Date(until - input.windowDays * DAY_MS).toISOString(), until: new Date(until).toISOString() },
    perSecond: input.perSecond,
    pageSize: PAGE_SIZE,
    filesPerRun: FILES_PER_RUN,
    notifyTaskQueue: input.notifyTaskQueue,
  }];
  try {
    await startChild<typeof fileRescan>('fileRescan', {
      workflowId,
      args,
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      priority: { priorityKey: RESCAN_PRIORITY_KEY },
      staticSummary: `Re-scans the files stored in the last ${input.windowDays} days with clamd ${signatureVersion}`,
    });
  } catch (error) {
    // This version's re-scan was started before (it runs, or it has run).
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  return { signatureVersion, previousSignatureVersion, rescanWorkflowId: workflowId };
}
