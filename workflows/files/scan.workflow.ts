import {
  ActivityFailure, ApplicationFailure, CancellationScope, condition, isCancellation, log, patched, proxyActivities, proxyLocalActivities, setHandler,
} from '@temporalio/workflow';
import type { FileScanActivities, FileScanOutcome, Rejection, ScannedFileOutcome, StagedObjectVerdict } from '../../activities/files/scan.activities';
import { mailNotice } from '../notify/mail-notice';
import { fileStagedSignal, type FileScanInput, type FileScanResult } from './files.messages';
import { infectedFileNotice } from './notices';

/**
 * Infrastructure (clamd, the object store, PostgreSQL) is waited for, never given up on: backoff from
 * 1 s to 1 min apart with no attempt limit. Only what no retry can change fails at once, and the
 * activities say which (non-retryable failures).
 */
const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' } as const;

/** A scan streams up to 50 MB through clamd; the heartbeat shows a lost worker within 30 s. */
const scanning = proxyActivities<FileScanActivities>({ startToCloseTimeout: '10 minutes', heartbeatTimeout: '30 seconds', retry });

/**
 * A file of at most LOCAL_SCAN_MAX_BYTES (every image, issue 17's upload → available) is scanned,
 * promoted and thumbnailed in a local activity: it runs in the worker holding the workflow task, so
 * an upload's history is one workflow task and a marker, where an activity task cost the Temporal
 * server and the worker about 40 ms of CPU per upload (its schedule, start, completion and a second
 * workflow task; bench:files). Larger files keep the activity, whose heartbeats show a long scan's
 * progress in the Temporal UI and notice a lost worker within 30 s. A lost worker here fails the
 * workflow task (10 s), whose retry runs the step again (every part of it is safe to repeat).
 * Backoffs over a second are workflow timers (localRetryThreshold), visible in the UI while clamd is
 * down, rather than sleeps inside a workflow task.
 */
const scanningHere = proxyLocalActivities<FileScanActivities>({ startToCloseTimeout: '2 minutes', localRetryThreshold: '1 second', retry });

/** The largest file scanned in a local activity: the image limit (docs/reference/files.md#rule-4). */
const LOCAL_SCAN_MAX_BYTES = 10 * 1024 * 1024;

/**
 * A server-side copy and one transaction, or two thumbnails of an image of at most 10 MB: seconds. A
 * worker lost during one is noticed when the attempt times out; the retry is safe (promote.ts, reject.ts).
 */
const steps = proxyActivities<FileScanActivities>({ startToCloseTimeout: '30 seconds', retry });

/** The rejected_reason of a staged object the scan cannot judge, by the activity's failure type. */
const UNSCANNABLE: Readonly<Record<string, string>> = {
  'staged-object-missing': 'staged-object-missing',
  'staged-object-empty': 'empty-file',
  'staged-object-size-mismatch': 'size-mismatch',
};

/** The last look at staging before a presigned upload expires (patched: histories without it reject at once). */
const PRESIGN_LAST_LOOK = 'files-presign-last-look';

/** Scan, promotion and thumbnails in one activity (patched: histories without it take the three steps). */
const SCAN_IN_ONE_STEP = 'files-scan-in-one-step';

/** A small file's one step as a local activity (patched: histories without it scheduled the activity). */
const SCAN_SMALL_HERE = 'files-scan-small-here';

const EXPIRED: Rejection = { reason: 'staging-expired', scanned: false };
const UPLOAD_EXPIRED: Rejection = { reason: 'upload-expired', scanned: false };

function unscannableReason(error: unknown): string | undefined {
  // An activity's failure arrives wrapped in an ActivityFailure; a local activity's non-retryable
  // failure arrives as the activity threw it.
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure && cause.type ? UNSCANNABLE[cause.type] : undefined;
}

const resultOf = (outcome: FileScanOutcome): FileScanResult =>
  (outcome.reason ? { status: outcome.status, reason: outcome.reason } : { status: outcome.status });

/**
 * One file's way out of staging (docs/reference/files.md, rules 2 and 10), under the workflow id `files.scan:<fileId>`:
 *
 *   staged    a direct upload starts here; a presigned one first waits for fileStaged, at most
 *             uploadTtlMs, then looks at staging once (a lost notification) before it is rejected
 *             `upload-expired` (the URL expired unused).
 *   scanned   the staged object is streamed to clamd (retried while clamd or the store is down).
 *   clean     → copied to its final key, available, files.file.uploaded and an audit record, staging
 *               removed; an image then gets its icon_32 and card_300 thumbnails. One activity
 *               (scanAndPromoteFile) scans and does all of this, local for a file of at most 10 MB,
 *               so an upload's history is one workflow task long; histories recorded before it took
 *               an activity task, and before that three (scan, promote, thumbnails).
 *   infected  → staging removed, rejected (`infected: <signatures>`), audit record, and a mail to each
 *               of the tenant's owners and admins.
 *   expired   → no scan verdict within the staging TTL of the start (the PUT never came, or clamd
 *               stayed down that long): staging removed, rejected (`staging-expired`).
 *
 * Every step is safe to repeat and guarded by the file's status, so a worker lost at any point ends
 * in one final state with one event. The result is the file's final status, also for a rejection.
 */
export async function fileScan(input: FileScanInput): Promise<FileScanResult> {
  const ref = { tenantId: input.tenantId, fileId: input.fileId };
  const stagingEndsAt = Date.now() + input.stagingTtlMs;
  let staged = input.staged ?? true;
  setHandler(fileStagedSignal, () => {
    staged = true;
  });

  // Inputs without uploadTtlMs (histories recorded before it) wait, and expire, as they did.
  if (!staged && !(await condition(() => staged, input.uploadTtlMs ?? input.stagingTtlMs))) {
    if (input.uploadTtlMs === undefined) return resultOf(await steps.rejectFile(ref, EXPIRED));
    // The store's notification of a PUT can be lost (Kafka down when it landed): one last look at
    // staging before the file is given up, so a completed upload is scanned instead of expired.
    if (!(patched(PRESIGN_LAST_LOOK) && await steps.stagedObjectLanded(ref))) return resultOf(await steps.rejectFile(ref, UPLOAD_EXPIRED));
    log.warn('the presigned upload landed unnoticed; scanning it now', { fileId: ref.fileId });
  }

  let verdict: ScannedFileOutcome | StagedObjectVerdict;
  try {
    const scan = (): Promise<ScannedFileOutcome | StagedObjectVerdict> => {
      // Inputs without a size (histories recorded before it) took the activity.
      if (input.sizeBytes !== undefined && input.sizeBytes <= LOCAL_SCAN_MAX_BYTES && patched(SCAN_SMALL_HERE)) return scanningHere.scanAndPromoteFile(ref);
      return patched(SCAN_IN_ONE_STEP) ? scanning.scanAndPromoteFile(ref) : scanning.scanStagedFile(ref);
    };
    // The staging TTL counts from the start, the wait for the PUT included.
    verdict = await CancellationScope.withTimeout(Math.max(stagingEndsAt - Date.now(), 1), scan);
  } catch (error) {
    if (isCancellation(error)) return resultOf(await steps.rejectFile(ref, EXPIRED));
    const reason = unscannableReason(error);
    if (!reason) throw error;
    log.warn('the staged object cannot be scanned; the file is rejected', { fileId: ref.fileId, reason });
    return resultOf(await steps.rejectFile(ref, { reason, scanned: false }));
  }

  if (verdict.infected) {
    const outcome = await steps.rejectFile(ref, { reason: `infected: ${verdict.signatures.join(', ')}`, scanned: true, signatures: verdict.signatures });
    // Also when a repeated step finds the file already rejected: the mail's key makes it one per admin.
    if (outcome.status === 'rejected' && outcome.reason?.startsWith('infected:')) {
      const notice = infectedFileNotice(ref.fileId, outcome.originalName, verdict.signatures);
      await mailNotice(`files:${ref.tenantId}:infected:${ref.fileId}`, await steps.tenantAdminEmails(ref.tenantId), input.notifyTaskQueue, notice);
    }
    return resultOf(outcome);
  }

  // Clean: the one step has promoted the file and rendered its thumbnails.
  if ('outcome' in verdict) return resultOf(verdict.outcome);
  // Only the bytes scanned are promoted: a presigned URL could PUT other ones meanwhile (histories
  // from before the ETag replay as they ran: an argument is not a command).
  const outcome = await steps.promoteFile(ref, verdict.etag);
  if (outcome.status === 'available' && outcome.image) await steps.generateThumbnails(ref);
  return resultOf(outcome);
}
