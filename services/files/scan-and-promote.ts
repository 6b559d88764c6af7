import type { Progress } from '../../common/progress';
import type { FileRow } from '../../db/queries/files/files.queries';
import { promoteFile } from './promote';
import { loadFile, type FileActor, type FileRef, type FileScanDeps } from './scan';
import { scanStagedObject } from './scanner';
import { generateThumbnails, isImage } from './thumbnails';

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
  const pending = await loadFile(deps, ref);
  let file: FileRow;
  if (pending.status === 'pending_scan') {
    const verdict = await scanStagedObject(deps, pending.stagingKey, progress, pending.sizeBytes);
    if (verdict.infected) return { infected: true, signatures: verdict.signatures };
    file = await promoteFile(deps, ref, actor, verdict.etag);
  } else {
    file = await promoteFile(deps, ref, actor);
  }
  if (file.status === 'available' && isImage(file.mimeType)) file = { ...file, thumbnails: await generateThumbnails(deps, ref) };
  return { infected: false, file };
}
