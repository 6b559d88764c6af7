import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../common/logger';
import { removeObjects, type ObjectStore } from '../../common/object-store';
import type { Progress } from '../../common/progress';
import type { DatabasePool } from '../../db/pool';
import { adjustUsage } from '../../db/queries/billing/usage.queries';
import { selectFile, type FileRow } from '../../db/queries/files/files.queries';
import { markStoredFileRejected, selectNextRescanTenant, selectRescanFiles, type RescanRow } from '../../db/queries/files/rescan.queries';
import { withTenant } from '../../db/tenant';
import type { RescanCursor, RescanPage, RescanWindow } from '../../workflows/files/rescan.messages';
import { enqueueEvent } from '../events/publish';
import type { FileActor, FileRef } from './scan';
import { fileAudit } from './scan-records';
import { scanStagedObject, StagedObjectEmpty, StagedObjectMissing, type ScanVerdict, type VirusScanner } from './scanner';
import { objectKeysOf } from './trash';

/**
 * The retroactive re-scan (issue 17, "Beyond the specification"; docs/decisions/files.md, Re-scan):
 * when clamd's signatures change, the files stored in the last days are scanned again, and a file
 * now found infected is rejected, its objects removed and its tenant's admins told
 * (workflows/files/rescan.workflow.ts). Reading is on the fleet pool for which tenant comes next and
 * on the application role, tenant by tenant, for everything else.
 */
export interface FileRescanDeps {
  appPool: DatabasePool;
  /** The owner role: only to find the next tenant with files in the window (selectNextRescanTenant). */
  fleetPool: DatabasePool;
  objectStore: ObjectStore;
  scanner: VirusScanner;
  logger: Logger;
}

/**
 * The scanner's signature version, from its answer to VERSION (`ClamAV 1.4.6/27500/Tue Nov 25
 * 08:00:00 2026`): the engine and the signature database version, `1.4.6/27500`, without the date
 * (which only follows the database). Either changing can change what is detected. A clamd that has
 * loaded no official database (only local signature files) answers `ClamAV 1.4.6`: the engine alone.
 */
export function signatureVersionOf(answer: string): string {
  const match = /^ClamAV ([^/\s]+)(?:\/(\d+))?/.exec(answer.trim());
  if (!match) throw new Error(`the scanner's VERSION answer is not ClamAV's: ${JSON.stringify(answer)}`);
  return match[2] ? `${match[1]}/${match[2]}` : match[1];
}

/** Asks clamd for its version (an unreachable clamd is an error, retried by the caller). */
export async function clamdSignatureVersion({ scanner }: Pick<FileRescanDeps, 'scanner'>): Promise<string> {
  return signatureVersionOf(await scanner.version());
}

export interface RescanRequest {
  window: RescanWindow;
  /** Where the previous page stopped; null for the first page. */
  after: RescanCursor | null;
  /** Files this page looks at, at most. */
  limit: number;
  /** Objects read per second, at most. */
  perSecond: number;
}

/**
 * The next `limit` stored files of the window after `after`, in (tenant id, created_at, id) order:
 * the rest of the current tenant's, then the next tenants' in turn.
 */
async function nextFiles(deps: FileRescanDeps, window: RescanWindow, after: RescanCursor | null, limit: number): Promise<RescanRow[]> {
  const files: RescanRow[] = [];
  let tenantId = after?.tenantId ?? null;
  if (after) {
    const keyset = { createdAt: after.createdAt, id: after.fileId };
    files.push(...await withTenant(deps.appPool, after.tenantId, (tx) => selectRescanFiles(tx, after.tenantId, window, keyset, limit)));
  }
  while (files.length < limit) {
    tenantId = await selectNextRescanTenant(deps.fleetPool, window, tenantId);
    if (!tenantId) break;
    const tenant = tenantId;
    files.push(...await withTenant(deps.appPool, tenant, (tx) => selectRescanFiles(tx, tenant, window, undefined, limit - files.length)));
  }
  return files;
}

/** Waits so that successive calls are at least 1/perSecond s apart. */
function pacer(perSecond: number): () => Promise<void> {
  const intervalMs = 1000 / perSecond;
  let nextAt = 0;
  return async () => {
    const now = Date.now();
    if (nextAt > now) await sleep(nextAt - now);
    nextAt = Math.max(now, nextAt) + intervalMs;
  };
}

/**
 * Scans a stored file's object with clamd (scanner.ts, the scan pipeline's stream to clamd: any key
 * works, the name is the staging's). Null when there is nothing to scan: the object is gone (the
 * file was purged or rejected meanwhile, between the page's read and its turn) or empty.
 */
async function scanStoredFile(deps: FileRescanDeps, file: FileRow, progress: Progress): Promise<ScanVerdict | null> {
  if (!file.objectKey) return null;
  try {
    return await scanStagedObject(deps, file.objectKey, progress);
  } catch (error) {
    if (!(error instanceof StagedObjectMissing || error instanceof StagedObjectEmpty)) throw error;
    deps.logger.warn({ fileId: file.id, tenantId: file.tenantId, reason: error.message }, 'a stored file had nothing to re-scan; skipped');
    return null;
  }
}

/**
 * One page of a re-scan: up to `limit` stored files after `after`, each object streamed to clamd at
 * most `perSecond` a second. Nothing is changed here (the workflow rejects what was found, each a
 * step of its own), so a page cut short is simply read again. `progress` gets the page so far after
 * each file, and `resumed` (a heartbeat's page) continues one from where it was cut. `next` is null
 * once the window has no more files.
 */
export async function rescanFiles(deps: FileRescanDeps, request: RescanRequest, progress: Progress, resumed?: RescanPage): Promise<RescanPage> {
  const page: RescanPage = resumed ?? { scanned: 0, skipped: 0, infected: [], next: request.after };
  const wanted = request.limit - page.scanned - page.skipped;
  const files = await nextFiles(deps, request.window, page.next, wanted);
  const pace = pacer(request.perSecond);
  for (const file of files) {
    await pace();
    const verdict = await scanStoredFile(deps, file, () => progress(page));
    if (!verdict) page.skipped += 1;
    else page.scanned += 1;
    if (verdict?.infected) page.infected.push({ tenantId: file.tenantId, fileId: file.id, signatures: verdict.signatures });
    page.next = { tenantId: file.tenantId, createdAt: file.position, fileId: file.id };
    progress(page);
  }
  if (files.length < wanted) page.next = null;
  return page;
}

/** What the re-scan found in a stored file. */
export interface RescanFinding {
  signatures: string[];
  signatureVersion: string;
}

/**
 * A stored file clamd now finds infected: in one transaction available (or deleted) → rejected with
 * `infected: <signatures>`, its bytes released from storage_bytes and the audit record
 * files.file.rejected (meta: reason, signatures, the signature version, `rescan: true`); then its
 * objects (original, thumbnails) are removed. Row first: a failed removal leaves unreachable bytes,
 * never a readable infected file, and a repeated step finds the file rejected and removes them again.
 * The platform acts, so the record names no actor. Answers the file as it now is; null if it has no row.
 */
export async function rejectRescannedFile(
  deps: Pick<FileRescanDeps, 'appPool' | 'objectStore'>, ref: FileRef, finding: RescanFinding, traceId?: string,
): Promise<FileRow | null> {
  const { tenantId, fileId } = ref;
  const reason = `infected: ${finding.signatures.join(', ')}`;
  const actor: FileActor = { actorId: null, traceId, platform: true };
  const file = await withTenant(deps.appPool, tenantId, async (tx) => {
    const rejected = await markStoredFileRejected(tx, tenantId, fileId, reason);
    if (!rejected) return selectFile(tx, tenantId, fileId);
    await adjustUsage(tx, 'storage_bytes', -rejected.sizeBytes);
    await enqueueEvent(tx, fileAudit('files.file.rejected', rejected, actor, {
      reason, signatures: finding.signatures, signatureVersion: finding.signatureVersion, rescan: true,
    }));
    return rejected;
  });
  if (file?.status === 'rejected' && file.rejectedReason === reason) await removeObjects(deps.objectStore, objectKeysOf(file));
  return file;
}
