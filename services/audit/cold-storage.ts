import { createHash } from 'node:crypto';
import type { ChainedRecord } from './chain';
import type { ChainRun } from '../../db/queries/audit/audit-retention.queries';
import type { ExportFormat, ExportRange } from '../../db/queries/audit/audit-export.queries';

/**
 * Where audit records go after AUDIT_HOT_DAYS, and where cold exports are written. Every key starts
 * with the tenant id, like every other object of a tenant, so one prefix holds all of a tenant's data.
 *
 *   {tenantId}/audit/{YYYY-MM}/{firstSeq}-{lastSeq}.ndjson.gz        the records of one month
 *   {tenantId}/audit/{YYYY-MM}/{firstSeq}-{lastSeq}.manifest.json    counts, checksum, chain head
 *   {tenantId}/audit-exports/{jobId}.{json|csv}                      a finished cold export
 */

/** A record as archived: every stored column, so the chain can be verified from the archive alone. */
export interface ArchivedRecord extends ChainedRecord {
  storedAt: string;
}

/** `2025-01` of a month's first day `2025-01-01`. */
export function monthKey(month: string): string {
  return month.slice(0, 7);
}

export function coldObjectKeys(tenantId: string, month: string, firstSeq: number, lastSeq: number): { object: string; manifest: string } {
  const base = `${tenantId}/audit/${monthKey(month)}/${firstSeq}-${lastSeq}`;
  return { object: `${base}.ndjson.gz`, manifest: `${base}.manifest.json` };
}

/** Written beside each archive object; the archive can be checked without the database. */
export interface ColdManifest {
  format: 1;
  tenantId: string;
  month: string;
  partition: string;
  object: string;
  /** gzip-compressed NDJSON, one ArchivedRecord per line, in seq order. */
  encoding: 'ndjson+gzip';
  records: number;
  firstSeq: number;
  lastSeq: number;
  /** Of the compressed object. */
  bytes: number;
  sha256: string;
  /**
   * The tenant's chain head when the month was archived: kept outside the database, it anchors the
   * chain, so a later rewrite of the whole hot chain and its head is detectable against it.
   */
  chainHeadAtExport: { seq: number; hash: string };
  /** The object's runs of consecutive seqs and the hashes linking each into the chain (migration 0017). */
  chainRuns: ChainRun[];
  archivedAt: string;
}

export function exportObjectKey(tenantId: string, jobId: string, format: ExportFormat): string {
  return `${tenantId}/audit-exports/${jobId}.${format}`;
}

/**
 * The job id of a cold export: the same tenant, range and format always give the same id, so
 * asking again finds the job already running (or finished) instead of starting a second one.
 */
export function exportJobId(tenantId: string, range: ExportRange, format: ExportFormat): string {
  const key = [tenantId, new Date(range.since).toISOString(), new Date(range.until).toISOString(), format].join('|');
  return createHash('sha256').update(key).digest('hex').slice(0, 32);
}

/** The workflow id is the business key (docs/decisions/temporal.md, Workflow ids): tenant and job. */
export function coldExportWorkflowId(tenantId: string, jobId: string): string {
  return `audit.cold-export:${tenantId}:${jobId}`;
}
