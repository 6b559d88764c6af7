import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * The files table (migration 0027) as the gateway reads and writes it: the upload's row, one file,
 * a tenant's list and its staging count. Statements run inside withTenant and name the tenant as
 * well (tenant scoping twice), so another tenant's file is never read. The scan pipeline's own
 * statements (status changes) are in scan.queries.ts.
 */

const countRow = z.object({ count: z.number() });

export const FILE_STATUSES = ['pending_scan', 'available', 'rejected', 'deleted', 'purged'] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

export const fileRow = z.object({
  id: z.string(),
  tenantId: z.string(),
  bucket: z.string(),
  originalName: z.string(),
  mimeType: z.string(),
  sizeBytes: z.number(),
  sha256: z.string().nullable(),
  status: z.enum(FILE_STATUSES),
  stagingKey: z.string(),
  objectKey: z.string().nullable(),
  /** {preset: objectKey} */
  thumbnails: z.record(z.string(), z.string()),
  meta: z.record(z.string(), z.unknown()).nullable(),
  uploadedBy: z.string().nullable(),
  rejectedReason: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  scannedAt: z.string().nullable(),
  deletedAt: z.string().nullable(),
  /** The latest processing job (migration 0029, services/files/process.ts); null for a file never processed. */
  processing: z.object({
    jobId: z.string(),
    status: z.enum(['processing', 'completed', 'failed']),
    startedAt: z.string(),
    completedAt: z.string().nullable(),
  }).nullable(),
});
export type FileRow = z.infer<typeof fileRow>;

export const fileColumns = sql.fragment`
  id, tenant_id AS "tenantId", bucket, original_name AS "originalName", mime_type AS "mimeType",
  size_bytes AS "sizeBytes", sha256, status, staging_key AS "stagingKey", object_key AS "objectKey",
  thumbnails, meta, uploaded_by AS "uploadedBy", rejected_reason AS "rejectedReason",
  created_at AS "createdAt", updated_at AS "updatedAt", scanned_at AS "scannedAt", deleted_at AS "deletedAt", processing
`;

export interface NewFile {
  id: string;
  tenantId: string;
  bucket: string;
  originalName: string;
  mimeType: string;
  sizeBytes: number;
  /** Null for a presigned upload, recorded before its bytes exist (services/files/presign.ts). */
  sha256: string | null;
  stagingKey: string;
  meta: Record<string, unknown> | null;
  uploadedBy: string | null;
}

/**
 * Records an upload whose bytes are in staging, as pending_scan. created_at is cut to the
 * millisecond: the list's keyset carries it as an ISO 8601 string (milliseconds), and a stored
 * microsecond would put rows between a page's last position and the position written in its token.
 */
export function insertFile(tx: DatabaseTransactionConnection, file: NewFile): Promise<FileRow> {
  return tx.one(sql.type(fileRow)`
    INSERT INTO files (id, tenant_id, bucket, original_name, mime_type, size_bytes, sha256, status, staging_key, meta,
                       uploaded_by, created_at, updated_at)
    VALUES (${file.id}, ${file.tenantId}, ${file.bucket}, ${file.originalName}, ${file.mimeType}, ${file.sizeBytes},
            ${file.sha256}, 'pending_scan', ${file.stagingKey}, ${file.meta === null ? null : sql.jsonb(file.meta as Parameters<typeof sql.jsonb>[0])},
            ${file.uploadedBy}, date_trunc('milliseconds', now()), now())
    RETURNING ${fileColumns}
  `);
}

/** One file of the tenant, whatever its status; null for an unknown id or another tenant's. */
export function selectFile(tx: DatabaseTransactionConnection, tenantId: string, id: string): Promise<FileRow | null> {
  return tx.maybeOne(sql.type(fileRow)`SELECT ${fileColumns} FROM files WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

/** A list position: the last row of the previous page. */
export interface FileKeyset {
  createdAt: string;
  id: string;
}

export interface FileFilter {
  bucket?: string;
  status?: Exclude<FileStatus, 'purged'>;
  uploadedBy?: string;
}

/**
 * A page of the tenant's files, newest first by (createdAt, id), on the (tenant_id, created_at, id)
 * index. Purged files are gone for the API and never listed. The keyset is written without a row
 * comparison: under row-level security only leakproof operators reach the index
 * (docs/decisions/audit.md).
 */
export function selectFiles(
  tx: DatabaseTransactionConnection, tenantId: string, filter: FileFilter, after: FileKeyset | undefined, limit: number,
): Promise<readonly FileRow[]> {
  const conditions = [
    sql.fragment`tenant_id = ${tenantId}`,
    filter.status ? sql.fragment`status = ${filter.status}` : sql.fragment`status <> 'purged'`,
    ...(filter.bucket ? [sql.fragment`bucket = ${filter.bucket}`] : []),
    ...(filter.uploadedBy ? [sql.fragment`uploaded_by = ${filter.uploadedBy}`] : []),
    ...(after
      ? [sql.fragment`created_at <= ${after.createdAt}::timestamptz
          AND (created_at < ${after.createdAt}::timestamptz OR id < ${after.id})`]
      : []),
  ];
  return tx.any(sql.type(fileRow)`
    SELECT ${fileColumns} FROM files
    WHERE ${sql.join(conditions, sql.fragment` AND `)}
    ORDER BY created_at DESC, id DESC
    LIMIT ${limit}
  `);
}

/** The tenant's files waiting for their scan: what the staging cap (FILES_STAGING_MAX_PER_TENANT) counts. */
export function countStagedFiles(tx: DatabaseTransactionConnection, tenantId: string): Promise<number> {
  return tx.oneFirst(sql.type(countRow)`
    SELECT count(*) AS count FROM files WHERE tenant_id = ${tenantId} AND status = 'pending_scan'
  `);
}
