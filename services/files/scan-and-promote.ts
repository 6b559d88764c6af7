import type { Progress } from '../../common/progress';
import type { FileRow } from '../../db/queries/files/files.queries';
import { promoteLoadedFile } from './promote';
import { loadFile, type FileActor, type FileRef, type FileScanDeps } from './scan';
import { scanStagedObject } from './scanner';
import { generateThumbnailsOf, isImage, UPLOAD_THUMBNAILS } from './thumbnails';

/** What a scan in one step came to: infected (the caller rejects the file), or the file as it now is. */
export type ScannedFile = { infected: true; signatures: string[] } | { infected: false; file: FileRow };

/**
 * A file's way out of staging in one step, for the scan workflow's one activity: scan the staged
 * object, promote the bytes scanned when they are clean (promote.ts), then render an image's upload
 * thumbnails. One activity instead of three halves the workflow's history and its tasks, which is
 * most of what an upload costs beyond the work itself.
 *
 * Safe to repeat after a worker was lost at any point: a file no longer pending_scan was promoted
 * (or rejected) by an earlier attempt, whose staged object may be gone already, so it is not scanned
 * again; only what is left is finished (staging removed, thumbnails rendered again, which writes the
 * same objects). An infected file is left pending: rejecting it and telling the admins is the
 * caller's next step.
 */
export async function scanAndPromoteFile(deps: FileScanDeps, ref: FileRef, actor: FileActor, progress: Progress): Promise<ScannedFile> {
  // The row is read once: promotion and thumbnails work from it (and from the row the promotion wrote).
  const loaded = await loadFile(deps, ref);
  let scanned: { etag?: string; bytes?: Buffer } = {};
  if (loaded.status === 'pending_scan') {
    // An image's bytes are kept from the scan for its thumbnails: promotion copies exactly the bytes
    // scanned (their ETag), so they are the promoted object's, and the store is read once.
    const verdict = await scanStagedObject(deps, loaded.stagingKey, progress, loaded.sizeBytes, { keepBytes: isImage(loaded.mimeType) });
    if (verdict.infected) return { infected: true, signatures: verdict.signatures };
    scanned = verdict;
  }
  const file = await promoteLoadedFile(deps, loaded, actor, scanned.etag);
  if (file.status !== 'available' || !isImage(file.mimeType)) return { infected: false, file };
  return { infected: false, file: { ...file, thumbnails: await generateThumbnailsOf(deps, file, UPLOAD_THUMBNAILS, scanned.bytes) } };
}
