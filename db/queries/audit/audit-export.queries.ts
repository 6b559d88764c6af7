import type { Readable } from 'node:stream';
import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { rowsOf } from '../../stream-rows';
import { sql, type DatabaseTransactionConnection } from '../../pool';
import { chainedRecord } from './audit-records.queries';

/**
 * Reads for exports (GET /audit/export and the cold-export workflow) and the cold-export jobs of
 * migration 0009.
 */

/**
 * The records of one tenant in [since, until), in chain (seq) order, handed to `onRecords` as an
 * object stream. It is one server-side cursor (pg-query-stream fetches 100 rows at a time), read
 * only as fast as the consumer takes records, so memory stays constant however many rows match.
 * The tenant is named explicitly as well as by the transaction's row-level security.
 * The promise settles when the stream has been read to its end, or rejects with the query's error.
 */
export function streamRecordsInRange(
  db: CommonQueryMethods, tenantId: string, range: ExportRange, onRecords: (records: Readable) => void,
): Promise<unknown> {
  return db.stream(sql.type(chainedRecord)`
    SELECT id, tenant_id AS "tenantId", seq, action, entity_type AS "entityType", entity_id AS "entityId",
           actor_id AS "actorId", actor_ip AS "actorIp", actor_user_agent AS "actorUserAgent",
           impersonator_id AS "impersonatorId", before, after, meta, trace_id AS "traceId", occurred_at AS "timestamp",
           encode(prev_hash, 'hex') AS "prevHash", encode(hash, 'hex') AS "hash"
    FROM audit_records_readable
    WHERE tenant_id = ${tenantId} AND occurred_at >= ${range.since}::timestamptz AND occurred_at < ${range.until}::timestamptz
    ORDER BY seq
  `, (rows) => onRecords(rowsOf(rows)));
}

/**
 * Lets one streamed read (an export, an archive upload) run as long as its reader takes. Every pool
 * sets statement_timeout to 30 s (db/pool.ts), and PostgreSQL counts it across the whole cursor, not
 * per fetch: an export of a million records to a slow client, or on a busy machine, was cancelled
 * after 30 s. Switched off for this transaction only; a reader that stalls is still ended by
 * idle_in_transaction_session_timeout (60 s, slonik's default), since between fetches the session
 * is idle in its transaction.
 */
export async function allowLongStream(tx: DatabaseTransactionConnection): Promise<void> {
  await tx.query(sql.unsafe`SELECT set_config('statement_timeout', '0', true)`);
}

export const EXPORT_JOB_STATUSES = ['queued', 'running', 'completed', 'failed', 'expired'] as const;
export type ExportJobStatus = (typeof EXPORT_JOB_STATUSES)[number];

const exportJob = z.object({
  id: z.string(),
  format: z.enum(['json', 'csv']),
  since: z.string(),
  until: z.string(),
  status: z.enum(EXPORT_JOB_STATUSES),
  objectKey: z.string().nullable(),
  records: z.number().nullable(),
  bytes: z.number().nullable(),
  error: z.string().nullable(),
  createdAt: z.string(),
  completedAt: z.string().nullable(),
  expiresAt: z.string().nullable(),
});

export type ExportJob = z.infer<typeof exportJob>;

const exportJobColumns = sql.fragment`
  id, format, since, until, status, object_key AS "objectKey", records, bytes, error,
  created_at AS "createdAt", completed_at AS "completedAt", expires_at AS "expiresAt"
`;

export interface NewExportJob {
  tenantId: string;
  id: string;
  format: ExportFormat;
  range: ExportRange;
  requestedBy: string | null;
}

/**
 * Queues a job unless it exists; a failed or expired one is queued again (its workflow has ended, so
 * a new run starts), while a queued, running or completed one is left as it is.
 */
export async function queueExportJob(db: CommonQueryMethods, job: NewExportJob): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO audit_export_jobs (tenant_id, id, format, since, until, status, requested_by)
    VALUES (${job.tenantId}, ${job.id}, ${job.format}, ${job.range.since}::timestamptz, ${job.range.until}::timestamptz,
            'queued', ${job.requestedBy})
    ON CONFLICT (tenant_id, id) DO UPDATE
      SET status = 'queued', requested_by = EXCLUDED.requested_by, object_key = NULL, records = NULL, bytes = NULL,
          error = NULL, completed_at = NULL, expires_at = NULL, updated_at = now()
      WHERE audit_export_jobs.status IN ('failed', 'expired')
  `);
}

export function selectExportJob(db: CommonQueryMethods, tenantId: string, id: string): Promise<ExportJob | null> {
  return db.maybeOne(sql.type(exportJob)`
    SELECT ${exportJobColumns} FROM audit_export_jobs WHERE tenant_id = ${tenantId} AND id = ${id}
  `);
}

export type ExportJobUpdate =
  | { status: 'running' }
  | { status: 'completed'; objectKey: string; records: number; bytes: number; expiresAt: string }
  | { status: 'failed'; error: string }
  | { status: 'expired' };

/** Moves a job on (the workflow's activities, as the owner role); setting the same state twice is harmless. */
export async function updateExportJob(db: CommonQueryMethods, tenantId: string, id: string, update: ExportJobUpdate): Promise<void> {
  const set = update.status === 'completed'
    ? sql.fragment`object_key = ${update.objectKey}, records = ${update.records}, bytes = ${update.bytes},
                   expires_at = ${update.expiresAt}::timestamptz, completed_at = now(), error = NULL`
    : update.status === 'failed'
      ? sql.fragment`error = ${update.error}`
      // A new run starts clean; an expired job keeps its counts, only its object is gone.
      : update.status === 'running'
        ? sql.fragment`object_key = NULL, records = NULL, bytes = NULL, error = NULL, completed_at = NULL, expires_at = NULL`
        : sql.fragment`expires_at = LEAST(expires_at, now())`;
  await db.query(sql.unsafe`
    UPDATE audit_export_jobs SET status = ${update.status}, ${set}, updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${id}
  `);
}

/**
 * Holds the audit store's partitions steady for the rest of the transaction: retention drops a
 * partition only under an exclusive lock, so once this is held, what the catalogue of cold objects
 * says and what the partitions hold cannot change under a reader that needs both (the cold export).
 */
export async function holdPartitionsSteady(tx: DatabaseTransactionConnection): Promise<void> {
  await tx.query(sql.unsafe`LOCK TABLE audit_records IN ACCESS SHARE MODE`);
}

export interface ExportRange {
  since: string;
  until: string;
}

export const EXPORT_FORMATS = ['json', 'csv'] as const;

export type ExportFormat = (typeof EXPORT_FORMATS)[number];
