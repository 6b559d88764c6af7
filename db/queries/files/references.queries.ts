import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';
import { fileColumns, fileRow, type FileRow } from './files.queries';

/**
 * file_references (migration 0030): who references which file, written in the transaction of the
 * referrer's own write (services/data/file-references.ts). Every statement names the tenant, and
 * row-level security checks it again (withTenant).
 */

const idRow = z.object({ id: z.string() });

export interface FileReference {
  tenantId: string;
  /** `data:<module>.<model>.<field>` or `user.avatar`. */
  referrer: string;
  /** The record's id, or the user's. */
  referrerId: string;
}

/**
 * The files among `fileIds` a write may reference (pending_scan or available, of the tenant), with
 * their orphan mark cleared: a file referenced again is no orphan. The UPDATE also locks each row
 * until the write commits, which is what keeps it from racing the sweep's purge: a purge that comes
 * second finds orphaned_at cleared (its guard re-reads the row it waited for), and a write that
 * comes second finds the file purged and refers to nothing.
 */
export async function claimReferencedFiles(tx: DatabaseTransactionConnection, tenantId: string, fileIds: readonly string[]): Promise<Set<string>> {
  const rows = await tx.anyFirst(sql.type(idRow)`
    UPDATE files SET orphaned_at = NULL
    WHERE tenant_id = ${tenantId} AND id = ANY(${sql.array(fileIds, 'uuid')}) AND status IN ('pending_scan', 'available')
    RETURNING id
  `);
  return new Set(rows);
}

/** The referrer now holds `fileId` (a referrer holds one file at a time). */
export async function upsertFileReference(tx: DatabaseTransactionConnection, reference: FileReference, fileId: string): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO file_references (tenant_id, referrer, referrer_id, file_id)
    VALUES (${reference.tenantId}, ${reference.referrer}, ${reference.referrerId}, ${fileId})
    ON CONFLICT (tenant_id, referrer, referrer_id) DO UPDATE SET file_id = EXCLUDED.file_id, created_at = now()
  `);
}

/** The file the referrer holds, or null: one statement, for a read that follows the reference. */
export function selectReferencedFile(tx: DatabaseTransactionConnection, reference: FileReference): Promise<FileRow | null> {
  const { tenantId, referrer, referrerId } = reference;
  return tx.maybeOne(sql.type(fileRow)`
    SELECT ${fileColumns} FROM files
    WHERE tenant_id = ${tenantId} AND id = (
      SELECT file_id FROM file_references WHERE tenant_id = ${tenantId} AND referrer = ${referrer} AND referrer_id = ${referrerId}
    )
  `);
}

/** The referrer lets go of its file (the field cleared, the record deleted). */
export async function deleteFileReference(tx: DatabaseTransactionConnection, reference: FileReference): Promise<void> {
  await tx.query(sql.unsafe`
    DELETE FROM file_references
    WHERE tenant_id = ${reference.tenantId} AND referrer = ${reference.referrer} AND referrer_id = ${reference.referrerId}
  `);
}
