import { sql, type DatabaseTransactionConnection } from '../../pool';
import { fileColumns, fileRow, type FileRow } from './files.queries';

/**
 * The processing jobs' statements on `files` (migration 0029, services/files/process.ts). Every
 * statement names the tenant, and row-level security checks it again (withTenant); each is guarded
 * so a retried activity changes nothing the second time.
 */

/** What a job's request records on its file: the file's latest job, status processing. */
export interface ProcessingStart {
  jobId: string;
  startedAt: string;
}

/** An available file's latest job becomes `start`; null when the file is not available. */
export function markFileProcessing(
  tx: DatabaseTransactionConnection, tenantId: string, fileId: string, start: ProcessingStart,
): Promise<FileRow | null> {
  const processing = { jobId: start.jobId, status: 'processing', startedAt: start.startedAt, completedAt: null };
  return tx.maybeOne(sql.type(fileRow)`
    UPDATE files SET processing = ${sql.jsonb(processing)}, updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${fileId} AND status = 'available'
    RETURNING ${fileColumns}
  `);
}

/** The content a job made, as stored at `objectKey`. */
export interface FileVersion {
  objectKey: string;
  mimeType: string;
  sizeBytes: number;
  sha256: string;
}

/**
 * The file's content becomes `version` if it is still available with the content the version was
 * made from (`fromKey`); its thumbnails, made from the old content, are forgotten. null when the
 * file has moved on (another job's content, the trash): the caller reads the row to tell which.
 */
export function replaceFileContent(
  tx: DatabaseTransactionConnection, tenantId: string, fileId: string, fromKey: string, version: FileVersion,
): Promise<FileRow | null> {
  return tx.maybeOne(sql.type(fileRow)`
    UPDATE files
    SET object_key = ${version.objectKey}, mime_type = ${version.mimeType}, size_bytes = ${version.sizeBytes},
        sha256 = ${version.sha256}, thumbnails = '{}', updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${fileId} AND status = 'available' AND object_key = ${fromKey}
    RETURNING ${fileColumns}
  `);
}

/**
 * The job `jobId` ends (completed or failed) if it is still the file's latest job and still
 * processing; null otherwise (a later job, or a repetition of this step).
 */
export function settleFileProcessing(
  tx: DatabaseTransactionConnection, tenantId: string, fileId: string, jobId: string,
  end: { status: 'completed' | 'failed'; completedAt: string },
): Promise<FileRow | null> {
  return tx.maybeOne(sql.type(fileRow)`
    UPDATE files SET processing = processing || ${sql.jsonb(end)}, updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${fileId}
      AND processing ->> 'jobId' = ${jobId} AND processing ->> 'status' = 'processing'
    RETURNING ${fileColumns}
  `);
}
