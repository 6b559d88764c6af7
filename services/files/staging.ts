import { accountIdOf, type AuthState } from '../../common/context';
import { discardUpload, removeObjects, type ObjectStore } from '../../common/object-store';
import { problems } from '../../common/problems';
import { adjustUsage } from '../../db/queries/billing/usage.queries';
import { countStagedFiles, insertFile, type FileRow, type NewFile } from '../../db/queries/files/files.queries';
import { markFileRejected } from '../../db/queries/files/scan.queries';
import type { DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { countCreationIn } from '../billing/limits';
import type { FilesDeps, FileScans } from './deps';
import { tusSidecarKeysOf } from './object-keys';

/**
 * What a direct upload (upload.ts), a presigned one (presign.ts) and a resumable one (tus.ts)
 * share: the room in the tenant's staging area, the pending_scan row with its bytes counted as
 * storage, and the way back when the scan cannot be started or the staged object must go.
 */

/** Why an upload whose scan could not be started was given up (rejected_reason). */
const SCAN_NOT_STARTED = 'scan-not-started';

/** The workflow service, or 503 before anything is stored: a file nobody scans would wait in staging for ever. */
export function connectedScans(deps: FilesDeps): FileScans {
  const scans = deps.scans();
  if (!scans) throw problems.unavailable('The workflow service is not connected; try again shortly');
  return scans;
}

/** 503 staging-limit-exceeded once the tenant has FILES_STAGING_MAX_PER_TENANT files waiting for their scan. */
export async function checkStagingRoom(tx: DatabaseTransactionConnection, tenantId: string, max: number): Promise<void> {
  if (await countStagedFiles(tx, tenantId) >= max) throw problems.stagingLimitExceeded(max);
}

/** The same check in a transaction of its own: the early refusal, before a byte is read or a URL signed. */
export function checkStagingRoomOf(deps: FilesDeps, tenantId: string): Promise<void> {
  return withTenant(deps.db, tenantId, (tx) => checkStagingRoom(tx, tenantId, deps.settings.stagingMaxPerTenant));
}

/** A file about to wait in staging: the row's fields that the caller knows. */
export type StagedFileRecord = Omit<NewFile, 'tenantId' | 'uploadedBy'>;

/**
 * Records a file as pending_scan at its staging key and counts its bytes into the
 * plan's storage_bytes, in one transaction. Counting the bytes takes the tenant's storage counter
 * row lock, which orders its uploads: the staging count after it then sees every upload committed
 * before this one, so neither the plan's limit (402 plan-limit-exceeded) nor the staging cap (503)
 * can be passed by parallel uploads. A refusal rolls both back.
 */
export function recordStagedFile(deps: FilesDeps, auth: AuthState, file: StagedFileRecord): Promise<FileRow> {
  const { tenantId, userId } = auth;
  return withTenant(deps.db, tenantId, async (tx) => {
    await countCreationIn(tx, 'storage_bytes', deps.enforcePlanLimits, file.sizeBytes);
    await checkStagingRoom(tx, tenantId, deps.settings.stagingMaxPerTenant);
    return insertFile(tx, { ...file, tenantId, uploadedBy: accountIdOf(userId) });
  });
}

/**
 * Starts the scan workflow of a recorded file. If it cannot be started, the file would wait in
 * staging for ever (its timer is the workflow's): it is rejected, its bytes leave the plan's usage,
 * its staged object is removed, and the answer is 503.
 */
export async function startScan(deps: FilesDeps, scans: FileScans, row: FileRow, upload?: { uploadTtlMs: number }): Promise<void> {
  try {
    await scans.start({ tenantId: row.tenantId, fileId: row.id, sizeBytes: row.sizeBytes, ...(upload && { staged: false, uploadTtlMs: upload.uploadTtlMs }) });
  } catch (error) {
    await withTenant(deps.db, row.tenantId, async (tx) => {
      if (await markFileRejected(tx, row.tenantId, row.id, SCAN_NOT_STARTED, false)) await adjustUsage(tx, 'storage_bytes', -row.sizeBytes);
    });
    await discardStaged(deps, row.stagingKey);
    throw problems.unavailable('The malware scan could not be started; upload the file again', error);
  }
}

/**
 * Removes what a refused upload left in staging. Its own failure does not replace the refusal the
 * client is answered with; it is logged, with the key to remove by hand.
 */
export async function discardStaged(deps: FilesDeps, stagingKey: string): Promise<void> {
  await discardUpload(deps.objectStore, stagingKey).catch((error: unknown) => {
    deps.logger.error({ err: error, stagingKey }, 'a refused upload could not be removed from staging');
  });
}

/**
 * Removes everything a file may have left in staging: its object, the parts of a multipart upload
 * that never completed (a resumable upload never finished), and a resumable upload's info object and
 * incomplete part (tusSidecarKeysOf). Removing what is not there is success, so a retry is harmless.
 */
export async function removeStagedObjects(store: ObjectStore, stagingKey: string): Promise<void> {
  await Promise.all([discardUpload(store, stagingKey), removeObjects(store, tusSidecarKeysOf(stagingKey))]);
}
