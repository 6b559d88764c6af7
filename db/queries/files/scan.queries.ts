import { sql, type DatabaseTransactionConnection } from '../../pool';
import { fileColumns, fileRow, type FileRow } from './files.queries';

/**
 * The scan workflow's statements on `files` (migration 0027): a file's one move out of pending_scan,
 * to available or to rejected. Thumbnails are thumbnails.queries.ts's. Each move is guarded by the status it leaves, so
 * a retried activity (or a second run) changes nothing once the file has moved. Every statement names
 * the tenant, and row-level security checks it again (withTenant). Rows and reads are files.queries.ts's.
 */

/** pending_scan → available at `objectKey`; null when the file is no longer pending_scan. */
export function markFileAvailable(
  tx: DatabaseTransactionConnection, tenantId: string, fileId: string, objectKey: string,
): Promise<FileRow | null> {
  return tx.maybeOne(sql.type(fileRow)`
    UPDATE files SET status = 'available', object_key = ${objectKey}, scanned_at = now(), updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${fileId} AND status = 'pending_scan'
    RETURNING ${fileColumns}
  `);
}

/**
 * pending_scan → rejected for `reason`; null when the file is no longer pending_scan. scanned_at is
 * set only when a scan decided it (`scanned`), not when its staging expired unscanned.
 */
export function markFileRejected(
  tx: DatabaseTransactionConnection, tenantId: string, fileId: string, reason: string, scanned: boolean,
): Promise<FileRow | null> {
  return tx.maybeOne(sql.type(fileRow)`
    UPDATE files
    SET status = 'rejected', rejected_reason = ${reason}, updated_at = now(), scanned_at = CASE WHEN ${scanned} THEN now() END
    WHERE tenant_id = ${tenantId} AND id = ${fileId} AND status = 'pending_scan'
    RETURNING ${fileColumns}
  `);
}
