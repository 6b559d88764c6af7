import { adjustUsage } from '../../db/queries/billing/usage.queries';
import { selectFile, type FileRow } from '../../db/queries/files/files.queries';
import { markFileRejected } from '../../db/queries/files/scan.queries';
import { selectRoleHolderEmails } from '../../db/queries/identity/members.queries';
import { withTenant } from '../../db/tenant';
import { enqueueEvent } from '../events/publish';
import { stagingKeysOf } from './object-keys';
import type { FileActor, FileRef, FileScanDeps } from './scan';
import { fileAudit } from './scan-records';
import { removeStagedObjects } from './staging';

/** Why a file is rejected: its `rejected_reason`, and for an infected file the signatures found. */
export interface Rejection {
  /** `infected: <signatures>`, `staging-expired`, ... (docs/decisions/files.md). */
  reason: string;
  /** Set when clamd decided (scanned_at); a staging that expired unscanned leaves it empty. */
  scanned: boolean;
  signatures?: string[];
}

/**
 * A file that must never become readable (docs/reference/files.md#rule-10: infected, or staged longer than the
 * staging TTL): its staged object (and whatever an unfinished upload left: removeStagedObjects) is
 * deleted first, so the content is gone whatever happens next,
 * then in one transaction pending_scan → rejected with its audit record, and its bytes leave the
 * plan's storage_bytes (counted at upload, docs/decisions/files.md). Both steps are safe to repeat:
 * a missing object deletes fine and the update is guarded by pending_scan. A file that has
 * already left pending_scan keeps its state. Answers the file as it now is; null when it has no row
 * (an upload whose row never committed: its staged object is removed all the same).
 */
export async function rejectFile(
  deps: Pick<FileScanDeps, 'appPool' | 'objectStore'>, ref: FileRef, rejection: Rejection, actor: FileActor,
): Promise<FileRow | null> {
  const { tenantId, fileId } = ref;
  const current = await withTenant(deps.appPool, tenantId, (tx) => selectFile(tx, tenantId, fileId));
  if (current && current.status !== 'pending_scan') return current;
  const stagingKeys = current ? [current.stagingKey] : stagingKeysOf(tenantId, fileId);
  await Promise.all(stagingKeys.map((key) => removeStagedObjects(deps.objectStore, key)));
  if (!current) return null;
  return withTenant(deps.appPool, tenantId, async (tx) => {
    const rejected = await markFileRejected(tx, tenantId, fileId, rejection.reason, rejection.scanned);
    if (!rejected) return await selectFile(tx, tenantId, fileId) ?? current;
    await adjustUsage(tx, 'storage_bytes', -rejected.sizeBytes);
    await enqueueEvent(tx, fileAudit('files.file.rejected', rejected, actor, {
      reason: rejection.reason, ...(rejection.signatures && { signatures: rejection.signatures }),
    }));
    return rejected;
  });
}

/** Who is told of an infected upload (docs/reference/files.md#rule-10): the owners and admins. */
export function tenantAdminEmails({ appPool }: Pick<FileScanDeps, 'appPool'>, tenantId: string): Promise<string[]> {
  return withTenant(appPool, tenantId, (tx) => selectRoleHolderEmails(tx, tenantId, ['owner', 'admin']));
}
