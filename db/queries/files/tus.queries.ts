import { sql, type DatabaseTransactionConnection } from '../../pool';
import { fileColumns, fileRow, type FileRow } from './files.queries';

/**
 * The one statement of resumable uploads (services/files/tus.ts) beyond the upload's own: the type
 * of a file whose client named none, detected from its first bytes once they are all in staging.
 */

/** Sets the type of a file still waiting for its scan; null when it has left pending_scan. */
export function setPendingFileType(tx: DatabaseTransactionConnection, tenantId: string, id: string, mimeType: string): Promise<FileRow | null> {
  return tx.maybeOne(sql.type(fileRow)`
    UPDATE files SET mime_type = ${mimeType}, updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${id} AND status = 'pending_scan'
    RETURNING ${fileColumns}
  `);
}
