import { copyObject, isPreconditionFailed, removeObjects } from '../../common/object-store';
import { selectFile, type FileRow } from '../../db/queries/files/files.queries';
import { markFileAvailable } from '../../db/queries/files/scan.queries';
import { withTenant } from '../../db/tenant';
import { enqueueEvents } from '../events/publish';
import { objectKeyOf, tusSidecarKeysOf } from './object-keys';
import { rejectFile } from './reject';
import { loadFile, type FileActor, type FileRef, type FileScanDeps } from './scan';
import { fileAudit, fileUploadedEvent } from './scan-records';

/**
 * A clean scan makes the file available (docs/reference/files.md#rule-2: moved to its bucket), in three steps
 * that are each safe to repeat, so a retry after a crash at any point ends in the same single result:
 *   1. copy the staged object to its final key (a second copy writes the same object);
 *   2. in one transaction: pending_scan → available, files.file.uploaded and the audit record (the
 *      update is guarded by pending_scan, so a repetition writes no second event);
 *   3. delete the staged object (deleting a missing object succeeds).
 * A file that is no longer pending_scan is not copied again; only its staged object is removed.
 * With `scannedEtag` the copy takes the staged object only if it is still the one scanned: a presigned
 * URL stays valid after its PUT, and a second PUT of other bytes (same length and type) between the
 * scan and the copy would otherwise be promoted unscanned. Such a file is rejected
 * (`staged-object-changed`), its staged object removed. Answers the file as it now is.
 */
export async function promoteFile(
  deps: Pick<FileScanDeps, 'appPool' | 'objectStore'>, ref: FileRef, actor: FileActor, scannedEtag?: string,
): Promise<FileRow> {
  return promoteLoadedFile(deps, await loadFile(deps, ref), actor, scannedEtag);
}

/** promoteFile for a caller that has just read the file's row (`loaded`). */
export async function promoteLoadedFile(
  deps: Pick<FileScanDeps, 'appPool' | 'objectStore'>, loaded: FileRow, actor: FileActor, scannedEtag?: string,
): Promise<FileRow> {
  let file = loaded;
  const ref = { tenantId: loaded.tenantId, fileId: loaded.id };
  if (file.status === 'pending_scan') {
    const objectKey = objectKeyOf(file.tenantId, file.bucket, file.id);
    try {
      await copyObject(deps.objectStore, file.stagingKey, objectKey, scannedEtag);
    } catch (error) {
      if (!isPreconditionFailed(error)) throw error;
      return await rejectFile(deps, ref, { reason: 'staged-object-changed', scanned: false }, actor) ?? file;
    }
    const pending = file;
    file = await withTenant(deps.appPool, ref.tenantId, async (tx) => {
      const promoted = await markFileAvailable(tx, ref.tenantId, ref.fileId, objectKey);
      if (!promoted) return await selectFile(tx, ref.tenantId, ref.fileId) ?? pending;
      await enqueueEvents(tx, [fileUploadedEvent(promoted, actor), fileAudit('files.file.uploaded', promoted, actor)]);
      return promoted;
    });
    // Moved by someone else meanwhile (not to available): the copy must not outlive the decision.
    if (file.status !== 'available') await removeObjects(deps.objectStore, [objectKey]);
  }
  // A resumable upload's info object goes with it (its multipart upload completed when the upload finished).
  if (file.status !== 'pending_scan') await removeObjects(deps.objectStore, [file.stagingKey, ...tusSidecarKeysOf(file.stagingKey)]);
  return file;
}
