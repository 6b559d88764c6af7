import { currentRequestContext, type AuthState } from '../../common/context';
import { removeObjects, type ObjectStore } from '../../common/object-store';
import { problems } from '../../common/problems';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { adjustUsage } from '../../db/queries/billing/usage.queries';
import { selectFile, type FileRow } from '../../db/queries/files/files.queries';
import { markFileDeleted, markFilePurgedNow, markFileRestored, markTrashedFilePurged } from '../../db/queries/files/trash.queries';
import { withTenant } from '../../db/tenant';
import { enqueueEvent } from '../events/publish';
import type { FilesDeps } from './deps';
import type { FileActor, FileRef } from './scan';
import { fileAudit, type FileAuditAction } from './scan-records';
import { fileView, type FileView } from './views';

/**
 * The trash (docs/reference/files.md#rule-18: available → deleted → purged after the retention, or restored):
 * every move is one guarded UPDATE with its audit record in the same transaction, so the row is the
 * truth and the trash timer (workflows/files/trash.workflow.ts) only decides when to look again.
 * storage_bytes keeps counting a deleted file (the trash is billed) and is released when it is purged.
 * Objects are removed after the row is purged: a failed removal leaves unreachable bytes, never an
 * available file without its content, and the trash timer's purge removes them again.
 */

function actorOf(auth: AuthState): FileActor {
  return { actorId: auth.userId, traceId: currentRequestContext()?.traceId };
}

/** Every object a file has in the store: the original, its thumbnails, and a staged copy left behind. */
export function objectKeysOf(file: FileRow): string[] {
  return [file.stagingKey, ...(file.objectKey ? [file.objectKey] : []), ...Object.values(file.thumbnails)];
}

/**
 * What every purge writes in its own transaction once the row is purged: the file's bytes leave
 * storage_bytes and its audit record (`action`) is written. The objects are removed after the commit
 * (objectKeysOf), by the caller, which can repeat that on its own.
 */
export async function releasePurgedFile(
  tx: DatabaseTransactionConnection, file: FileRow, action: FileAuditAction, actor: FileActor, meta?: Record<string, unknown>,
): Promise<void> {
  await adjustUsage(tx, 'storage_bytes', -file.sizeBytes);
  await enqueueEvent(tx, fileAudit(action, file, actor, meta));
}

/**
 * DELETE /files/:id: an available file goes to the trash and its timer starts. Only an available file:
 * any other (pending_scan, rejected, already deleted, purged, another tenant's) is 404, as reading it
 * is. The timer is started inside the transaction, so a deletion never commits without its purge;
 * a timer whose deletion then failed to commit finds no such deletion and purges nothing.
 */
export async function deleteFile(deps: FilesDeps, auth: AuthState, id: string): Promise<void> {
  const trashes = deps.trashes();
  if (!trashes) throw problems.unavailable('The workflow service is not connected; try again shortly');
  await withTenant(deps.db, auth.tenantId, async (tx) => {
    const deleted = await markFileDeleted(tx, auth.tenantId, id);
    if (!deleted?.deletedAt) throw problems.fileNotFound(id);
    await enqueueEvent(tx, fileAudit('files.file.deleted', deleted, actorOf(auth)));
    try {
      await trashes.start({ tenantId: auth.tenantId, fileId: id, deletedAt: deleted.deletedAt });
    } catch (error) {
      throw problems.unavailable('The file\'s retention timer could not be started; delete it again', error);
    }
  });
}

/** Why a file could not be restored, by the status it has. */
function notRestorable(file: FileRow | null, id: string, retentionDays: number): Error {
  if (!file || file.status === 'pending_scan') return problems.fileNotFound(id);
  // A file purged from the trash was restorable once; one purged straight from available never was.
  if (file.status === 'deleted' || (file.status === 'purged' && file.deletedAt)) return problems.fileRestoreExpired(id, retentionDays);
  if (file.status === 'purged') return problems.fileNotFound(id);
  return problems.fileNotDeleted(id);
}

/**
 * POST /files/:id/restore: deleted → available while deleted_at is within the retention (by the
 * database's clock, even if the purge has not run yet). The trash timer is told after the commit;
 * if it cannot be, it finds the file available at its end and purges nothing.
 */
export async function restoreFile(deps: FilesDeps, auth: AuthState, id: string): Promise<FileView> {
  const retentionDays = deps.settings.softDeleteRetentionDays;
  const restored = await withTenant(deps.db, auth.tenantId, async (tx) => {
    const row = await markFileRestored(tx, auth.tenantId, id, retentionDays);
    if (!row) throw notRestorable(await selectFile(tx, auth.tenantId, id), id, retentionDays);
    await enqueueEvent(tx, fileAudit('files.file.restored', row, actorOf(auth)));
    return row;
  });
  try {
    await deps.trashes()?.restored(id);
  } catch (error) {
    deps.logger.warn({ err: error, fileId: id }, 'the trash timer of a restored file could not be told; it will find the file available');
  }
  return fileView(deps.objectStore, restored);
}

/**
 * DELETE /files/:id/permanent: an available or deleted file is purged at once, its bytes released
 * from storage_bytes, audit files.file.permanent_deleted; then its objects are removed. A trash timer
 * still running finds the file purged and changes nothing.
 */
export async function permanentlyDeleteFile(deps: FilesDeps, auth: AuthState, id: string): Promise<void> {
  const purged = await withTenant(deps.db, auth.tenantId, async (tx) => {
    const row = await markFilePurgedNow(tx, auth.tenantId, id);
    if (!row) throw problems.fileNotFound(id);
    await releasePurgedFile(tx, row, 'files.file.permanent_deleted', actorOf(auth));
    return row;
  });
  await removeObjects(deps.objectStore, objectKeysOf(purged));
}

/** What the trash timer's activity works with: the application role under row-level security, the platform's bucket. */
export interface FileTrashDeps {
  appPool: DatabasePool;
  objectStore: ObjectStore;
}

/**
 * The trash timer's end: purges the file if it is still in the trash from the deletion `deletedAt`
 * (storage_bytes released, audit files.file.purged), then removes the objects of a purged file. Safe
 * to repeat: a second run finds the file purged and only removes objects already gone. A file
 * restored, deleted again or never deleted is left as it is. Answers whether this call purged it.
 */
export async function purgeTrashedFile(
  deps: FileTrashDeps, ref: FileRef, deletedAt: string, actor: FileActor,
): Promise<{ purged: boolean }> {
  const { tenantId, fileId } = ref;
  const { purged, file } = await withTenant(deps.appPool, tenantId, async (tx) => {
    const row = await markTrashedFilePurged(tx, tenantId, fileId, deletedAt);
    if (!row) return { purged: false, file: await selectFile(tx, tenantId, fileId) };
    await releasePurgedFile(tx, row, 'files.file.purged', actor);
    return { purged: true, file: row };
  });
  if (file?.status === 'purged') await removeObjects(deps.objectStore, objectKeysOf(file));
  return { purged };
}
