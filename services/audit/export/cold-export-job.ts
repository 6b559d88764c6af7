import { pipeline, Readable, Transform } from 'node:stream';
import { maskAnonymized, type AnonymizedUsers } from '../anonymization-mask';
import type { ChainedRecord } from '../chain';
import { readArchivedRecords } from '../cold-archive';
import { exportObjectKey } from '../cold-storage';
import { createExportEncoder, EXPORT_CONTENT_TYPES } from '../export-format';
import type { Logger } from '../../../common/logger';
import { putStream, removeObjects, type ObjectStore, type StoredObject } from '../../../common/object-store';
import type { Progress } from '../../../common/progress';
import type { DatabasePool } from '../../../db/pool';
import { selectAnonymizedUsers } from '../../../db/queries/audit/audit-anonymization.queries';
import {
  allowLongStream, holdPartitionsSteady, streamRecordsInRange, updateExportJob,
  type ExportFormat, type ExportJobUpdate, type ExportRange,
} from '../../../db/queries/audit/audit-export.queries';
import { selectLiveColdObjects } from '../../../db/queries/audit/audit-retention.queries';
import { withTenant } from '../../../db/tenant';
import { mergeBySeq } from './merge-by-seq';

/**
 * The work of one cold export (docs/reference/audit.md#rule-16 and #rule-17), as its workflow runs it: the
 * job row moves through its states, the file is restored from the archive and the hot rows, and deleted at
 * the end of its retention. The gateway's side (queuing the job, reading its status) is cold-export.ts.
 */

/** One cold export: what the gateway asked for, under the job id derived from it. */
export interface ColdExportJob {
  tenantId: string;
  jobId: string;
  format: ExportFormat;
  /** ISO 8601 in UTC; since inclusive, until exclusive. */
  since: string;
  until: string;
}

export interface ColdExportJobDeps {
  /** The application role (row-level security applies): every statement runs in the export's tenant transaction. */
  appPool: DatabasePool;
  /** Where the archive objects are read and the export file is written. */
  objectStore: ObjectStore;
  logger: Logger;
}

export interface ColdExportFile {
  objectKey: string;
  records: number;
  bytes: number;
}

const PROGRESS_EVERY_RECORDS = 10_000;

/** `YYYY-MM-01` of the month holding an instant. */
function monthStart(iso: string): string {
  return `${iso.slice(0, 7)}-01`;
}

/**
 * The records of one archive object that fall in the range, in the object's (seq) order, masked as
 * the hot rows are by audit_records_readable: the archive holds records as they were stored, and an
 * anonymization (before or after the month was archived) must hide them in a cold export too.
 */
async function* archivedRecordsInRange(
  store: ObjectStore, objectKey: string, range: ExportRange, anonymized: AnonymizedUsers,
): AsyncGenerator<ChainedRecord> {
  for await (const { storedAt: _storedAt, ...record } of readArchivedRecords(store, objectKey)) {
    // Both sides are ISO 8601 UTC with milliseconds, so text order is time order.
    if (record.timestamp >= range.since && record.timestamp < range.until) yield maskAnonymized(record, anonymized);
  }
}

/** Moves the job on (running, completed, failed, expired), in its tenant's transaction. */
export async function updateColdExportJob({ appPool }: ColdExportJobDeps, job: ColdExportJob, update: ExportJobUpdate): Promise<void> {
  await withTenant(appPool, job.tenantId, (tx) => updateExportJob(tx, job.tenantId, job.jobId, update));
}

/**
 * Restores the range from the archive objects of its months and the rows still in PostgreSQL,
 * merged in chain order, and writes the export file to the object store. Reading both under
 * one lock on the store means no month can move to cold storage in between: each record is
 * read exactly once, from wherever it is. Safe to retry: the file is written anew.
 */
export async function writeColdExport(
  { appPool, objectStore, logger }: ColdExportJobDeps, job: ColdExportJob, progress: Progress,
): Promise<ColdExportFile> {
  const range = { since: new Date(job.since).toISOString(), until: new Date(job.until).toISOString() };
  const objectKey = exportObjectKey(job.tenantId, job.jobId, job.format);
  let records = 0;
  let uploading: Promise<StoredObject> | undefined;
  await withTenant(appPool, job.tenantId, async (tx) => {
    await holdPartitionsSteady(tx);
    await allowLongStream(tx);
    const lastMonth = monthStart(new Date(Date.parse(range.until) - 1).toISOString());
    const archived = await selectLiveColdObjects(tx, job.tenantId, monthStart(range.since), lastMonth);
    // Read in the transaction that reads the hot rows through the view: both are masked by the same anonymizations.
    const anonymized = archived.length > 0 ? await selectAnonymizedUsers(tx, job.tenantId) : new Map<string, number>();
    await streamRecordsInRange(tx, job.tenantId, range, (hot) => {
      const sources = [...archived.map((object) => archivedRecordsInRange(objectStore, object.objectKey, range, anonymized)), hot];
      const counted = new Transform({
        objectMode: true,
        transform(record: ChainedRecord, _encoding, done) {
          records += 1;
          if (records % PROGRESS_EVERY_RECORDS === 0) progress({ records });
          done(null, record);
        },
      });
      const body = pipeline(Readable.from(mergeBySeq(sources)), counted, createExportEncoder(job.format), () => undefined);
      uploading = putStream(objectStore, objectKey, body, EXPORT_CONTENT_TYPES[job.format]);
      // Awaited below; when a failed upload also fails the query, this keeps it from being unhandled.
      uploading.catch(() => undefined);
    });
  });
  const stored = await uploading!;
  logger.info({ tenantId: job.tenantId, jobId: job.jobId, records, bytes: stored.bytes }, 'cold export written');
  return { objectKey, records, bytes: stored.bytes };
}

/** Deletes the export file at the end of its retention; a second call finds nothing to delete. */
export async function expireColdExport(deps: ColdExportJobDeps, job: ColdExportJob, objectKey: string): Promise<void> {
  await removeObjects(deps.objectStore, [objectKey]);
  await updateColdExportJob(deps, job, { status: 'expired' });
}
