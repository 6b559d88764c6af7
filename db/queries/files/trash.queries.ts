import { sql, type DatabaseTransactionConnection } from '../../pool';
import { fileColumns, fileRow, type FileRow } from './files.queries';

/**
 * The trash's statements on `files` (migration 0027): available → deleted, deleted → available within
 * the retention, and the two ways to purged. Each is guarded by the status it leaves, so a repeated
 * request or activity changes nothing once the file has moved. Every statement names the tenant, and
 * row-level security checks it again (withTenant).
 */

/**
 * available → deleted, deleted_at now; null when the file is not available. deleted_at is cut to the
 * millisecond: the trash timer carries it as an ISO 8601 string and purges only the deletion it names.
 */
export function markFileDeleted(tx: DatabaseTransactionConnection, tenantId: string, fileId: string): Promise<FileRow | null> {
  return tx.maybeOne(sql.type(fileRow)`
    UPDATE files SET status = 'deleted', deleted_at = date_trunc('milliseconds', now()), updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${fileId} AND status = 'available'
    RETURNING ${fileColumns}
  `);
}

/**
 * deleted → available, only while deleted_at is within `retentionDays` of the database's clock: past
 * it the file is not restorable even if its purge has not run yet. Null when nothing was restored.
 * An orphan mark from before the deletion is dropped, so a file its owner has just restored is not
 * purged as an orphan before a whole retention has passed again (docs/decisions/files.md, Orphans).
 */
export function markFileRestored(
  tx: DatabaseTransactionConnection, tenantId: string, fileId: string, retentionDays: number,
): Promise<FileRow | null> {
  return tx.maybeOne(sql.type(fileRow)`
    UPDATE files SET status = 'available', deleted_at = NULL, orphaned_at = NULL, updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${fileId} AND status = 'deleted'
      AND deleted_at > now() - make_interval(days => ${retentionDays})
    RETURNING ${fileColumns}
  `);
}

/**
 * The trash timer's purge: deleted → purged, only for the deletion the timer was started for (its
 * deleted_at), so a file restored and deleted again meanwhile waits for its own timer. Null otherwise.
 */
export function markTrashedFilePurged(
  tx: DatabaseTransactionConnection, tenantId: string, fileId: string, deletedAt: string,
): Promise<FileRow | null> {
  return tx.maybeOne(sql.type(fileRow)`
    UPDATE files SET status = 'purged', updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${fileId} AND status = 'deleted' AND deleted_at = ${deletedAt}::timestamptz
    RETURNING ${fileColumns}
  `);
}

/** available or deleted → purged at once (DELETE /files/:id/permanent); null for any other status. */
export function markFilePurgedNow(tx: DatabaseTransactionConnection, tenantId: string, fileId: string): Promise<FileRow | null> {
  return tx.maybeOne(sql.type(fileRow)`
    UPDATE files SET status = 'purged', updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${fileId} AND status IN ('available', 'deleted')
    RETURNING ${fileColumns}
  `);
}
