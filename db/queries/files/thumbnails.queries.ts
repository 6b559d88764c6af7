import { sql, type DatabaseTransactionConnection } from '../../pool';
import { fileColumns, fileRow, type FileRow } from './files.queries';

/**
 * A file's thumbnails ({preset: objectKey}, migration 0027), written after the scan (the upload
 * presets) and on demand (GET /files/:id/thumbnail/:preset). The statement names the tenant, and
 * row-level security checks it again (withTenant).
 */

/**
 * Adds thumbnails to those the file has; the same preset again replaces its key. A jsonb merge, not
 * a read-modify-write: two processes rendering the same preset at once both land, the second
 * writing the same key again, and neither drops a preset the other added.
 */
export function mergeFileThumbnails(
  tx: DatabaseTransactionConnection, tenantId: string, fileId: string, thumbnails: Record<string, string>,
): Promise<FileRow | null> {
  return tx.maybeOne(sql.type(fileRow)`
    UPDATE files SET thumbnails = thumbnails || ${sql.jsonb(thumbnails)}, updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${fileId}
    RETURNING ${fileColumns}
  `);
}
