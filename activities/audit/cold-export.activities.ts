import { pipeline, Readable, Transform } from 'node:stream';
import { heartbeat } from '@temporalio/activity';
import { maskAnonymized, type AnonymizedUsers } from '../../services/audit/anonymization-mask';
import type { ChainedRecord } from '../../services/audit/chain';
import { readArchivedRecords } from '../../services/audit/cold-archive';
import { exportObjectKey } from '../../services/audit/cold-storage';
import type { ExportRange } from '../../db/queries/audit/audit-export.queries';
import { createExportEncoder, EXPORT_CONTENT_TYPES } from '../../services/audit/export-format';
import type { ExportFormat } from '../../db/queries/audit/audit-export.queries';
import { putStream, removeObjects, type ObjectStore, type StoredObject } from '../../common/object-store';
import { selectAnonymizedUsers } from '../../db/queries/audit/audit-anonymization.queries';
import { allowLongStream, holdPartitionsSteady, streamRecordsInRange, updateExportJob } from '../../db/queries/audit/audit-export.queries';
import { selectLiveColdObjects } from '../../db/queries/audit/audit-retention.queries';
import { withTenant } from '../../db/tenant';
import type { AuditStorageDeps } from './retention.activities';
import { mergeBySeq } from './merge-by-seq';

/** One cold export: what the gateway asked for, under the job id derived from it. */
export interface ColdExportJob {
  tenantId: string;
  jobId: string;
  format: ExportFormat;
  /** ISO 8601 in UTC; since inclusive, until exclusive. */
  since: string;
  until: string;
}

export interface ColdExportFile {
  objectKey: string;
  records: number;
  bytes: number;
}

const HEARTBEAT_EVERY_RECORDS = 10_000;

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

export function createAuditColdExportActivities({ ownerPool, objectStore, logger }: AuditStorageDeps) {
  return {
    async markColdExportRunning(job: ColdExportJob): Promise<void> {
      await updateExportJob(ownerPool, job.tenantId, job.jobId, { status: 'running' });
    },

    /**
     * Restores the range from the archive objects of its months and the rows still in PostgreSQL,
     * merged in chain order, and writes the export file to the object store. Reading both under
     * one lock on the store means no month can move to cold storage in between: each record is
     * read exactly once, from wherever it is. Safe to retry: the file is written anew.
     */
    async writeColdExport(job: ColdExportJob): Promise<ColdExportFile> {
      const range = { since: new Date(job.since).toISOString(), until: new Date(job.until).toISOString() };
      const objectKey = exportObjectKey(job.tenantId, job.jobId, job.format);
      let records = 0;
      let uploading: Promise<StoredObject> | undefined;
      await withTenant(ownerPool, job.tenantId, async (tx) => {
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
              if (records % HEARTBEAT_EVERY_RECORDS === 0) heartbeat({ records });
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
    },

    async markColdExportCompleted(job: ColdExportJob, file: ColdExportFile, expiresAt: string): Promise<void> {
      await updateExportJob(ownerPool, job.tenantId, job.jobId, { status: 'completed', ...file, expiresAt });
    },

    async markColdExportFailed(job: ColdExportJob, error: string): Promise<void> {
      await updateExportJob(ownerPool, job.tenantId, job.jobId, { status: 'failed', error });
    },

    /** Deletes the export file at the end of its retention; a second call finds nothing to delete. */
    async expireColdExport(job: ColdExportJob, objectKey: string): Promise<void> {
      await removeObjects(objectStore, [objectKey]);
      await updateExportJob(ownerPool, job.tenantId, job.jobId, { status: 'expired' });
    },
  };
}

export type AuditColdExportActivities = ReturnType<typeof createAuditColdExportActivities>;
