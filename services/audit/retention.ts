import { pipeline, Readable, Transform } from 'node:stream';
import { createGzip } from 'node:zlib';
import { addToRuns } from './chain';
import { coldObjectKeys, type ArchivedRecord, type ColdManifest } from './cold-storage';
import type { Logger } from '../../common/logger';
import type { Progress } from '../../common/progress';
import { measureObject, putStream, removeObjects, type ObjectStore, type StoredObject } from '../../common/object-store';
import type { DatabasePool } from '../../db/pool';
import { selectChainHead } from '../../db/queries/audit/audit-records.queries';
import { allowLongStream } from '../../db/queries/audit/audit-export.queries';
import {
  deleteUploadedColdObject, dropPartitionMakingObjectsLive, partitionExists, lockAuditRecordsForDrop, markColdObjectDeleted,
  selectColdObjectsDue, selectPartitionsEndingBy, selectPartitionTenantStats, selectUploadedColdObjects,
  streamPartitionRecords, upsertUploadedColdObject, type AuditPartition, type ChainRun, type ColdObject, type PartitionTenantStats,
} from '../../db/queries/audit/audit-retention.queries';

/**
 * Audit retention (docs/reference/audit.md#rule-17): monthly partitions older than AUDIT_HOT_DAYS are archived
 * to the object store, one verified object per tenant, then dropped; archive objects older than
 * AUDIT_COLD_YEARS are deleted. The Schedule's workflow calls these through its activities.
 */
export interface AuditRetentionDeps {
  /** The owner role: retention archives and drops whole monthly partitions, every tenant's records at once. */
  fleetPool: DatabasePool;
  /** Where cold objects and cold exports are written. */
  objectStore: ObjectStore;
  logger: Logger;
}

export interface ArchiveResult {
  tenants: number;
  records: number;
  /** Objects written by this attempt; the rest were found already uploaded and intact. */
  uploaded: number;
}

export type DropResult = { dropped: true; objects: number } | { dropped: false; reason: string };

/** The drop waits this long for the table lock (a running export holds it), then gives up for this run. */
const DROP_LOCK_TIMEOUT_MS = 5000;
const PROGRESS_EVERY_RECORDS = 10_000;
const DELETE_BATCH = 100;

/** One archived record per line. */
function ndjson(): Transform {
  return new Transform({
    writableObjectMode: true,
    transform(record: ArchivedRecord, _encoding, done) {
      done(null, `${JSON.stringify(record)}\n`);
    },
  });
}

/** Uploads one tenant's records of the partition and checks the stored bytes before recording it. */
async function uploadTenantMonth(
  { fleetPool, objectStore }: AuditRetentionDeps, partition: AuditPartition, stats: PartitionTenantStats, progress: Progress,
): Promise<void> {
  const keys = coldObjectKeys(stats.tenantId, partition.month, stats.firstSeq, stats.lastSeq);
  let streamed = 0;
  // Where this tenant's month sits in its chain, so a verifier can step over it once it is archived.
  const chainRuns: ChainRun[] = [];
  let uploading: Promise<StoredObject> | undefined;
  await fleetPool.transaction(async (tx) => {
    await allowLongStream(tx);
    await streamPartitionRecords(tx, partition.name, stats.tenantId, (records) => {
      const counted = new Transform({
        objectMode: true,
        transform(record: ArchivedRecord, _encoding, done) {
          streamed += 1;
          addToRuns(chainRuns, record);
          if (streamed % PROGRESS_EVERY_RECORDS === 0) progress({ partition: partition.name, tenantId: stats.tenantId, streamed });
          done(null, record);
        },
      });
      // pipeline, not pipe: a failed upload destroys every stage back to the cursor, ending the query.
      const body = pipeline(records, counted, ndjson(), createGzip(), () => undefined);
      uploading = putStream(objectStore, keys.object, body, 'application/gzip');
      // Awaited below; when a failed upload also fails the query, this keeps it from being unhandled.
      uploading.catch(() => undefined);
    });
  });
  const stored = await uploading!;
  if (streamed !== stats.records) {
    throw new Error(`archive of ${partition.name} for tenant ${stats.tenantId}: streamed ${streamed} records, expected ${stats.records}`);
  }
  // Read back what the store holds: only bytes that match what was sent may replace the rows.
  const check = await measureObject(objectStore, keys.object);
  if (check.sha256 !== stored.sha256 || check.bytes !== stored.bytes) {
    throw new Error(`archive object ${keys.object} does not read back as written`);
  }
  const head = await selectChainHead(fleetPool, stats.tenantId);
  const manifest: ColdManifest = {
    format: 1, tenantId: stats.tenantId, month: partition.month, partition: partition.name, object: keys.object,
    encoding: 'ndjson+gzip', records: stats.records, firstSeq: stats.firstSeq, lastSeq: stats.lastSeq,
    bytes: stored.bytes, sha256: stored.sha256,
    chainHeadAtExport: { seq: head?.lastSeq ?? 0, hash: head?.lastHash ?? '' },
    chainRuns,
    archivedAt: new Date().toISOString(),
  };
  await putStream(objectStore, keys.manifest, Readable.from([JSON.stringify(manifest, null, 2)]), 'application/json');
  await upsertUploadedColdObject(fleetPool, {
    tenantId: stats.tenantId, objectKey: keys.object, manifestKey: keys.manifest, month: partition.month,
    partitionName: partition.name, firstSeq: stats.firstSeq, lastSeq: stats.lastSeq, records: stats.records,
    bytes: stored.bytes, sha256: stored.sha256, chainRuns,
  });
}

/** An earlier attempt's object is reused when it still describes the partition and reads back intact. */
async function isIntact(objectStore: ObjectStore, object: ColdObject | undefined, stats: PartitionTenantStats): Promise<boolean> {
  if (!object || object.records !== stats.records || object.firstSeq !== stats.firstSeq || object.lastSeq !== stats.lastSeq) return false;
  const check = await measureObject(objectStore, object.objectKey).catch(() => null);
  return check?.sha256 === object.sha256 && check.bytes === object.bytes;
}

/** Monthly partitions whose whole month ended at or before `cutoff` (now minus AUDIT_HOT_DAYS). */
export async function listArchivablePartitions({ fleetPool }: AuditRetentionDeps, cutoff: string): Promise<AuditPartition[]> {
  return [...await selectPartitionsEndingBy(fleetPool, cutoff)];
}

/**
 * Writes every tenant's records of the partition to the object store, one object per tenant.
 * Idempotent and resumable: a tenant whose object an earlier attempt already uploaded and
 * verified is skipped; an object that no longer matches the partition (records replayed into
 * the month since) is removed and written again.
 */
export async function archivePartition(deps: AuditRetentionDeps, partition: AuditPartition, progress: Progress): Promise<ArchiveResult> {
  const { fleetPool, objectStore, logger } = deps;
  const stats = await selectPartitionTenantStats(fleetPool, partition.name);
  const earlier = new Map<string, ColdObject[]>();
  for (const object of await selectUploadedColdObjects(fleetPool, partition.name)) {
    earlier.set(object.tenantId, [...earlier.get(object.tenantId) ?? [], object]);
  }
  let uploaded = 0;
  for (const [index, tenant] of stats.entries()) {
    progress({ partition: partition.name, tenantsDone: index });
    const objects = earlier.get(tenant.tenantId) ?? [];
    const current = objects.find((object) => object.objectKey === coldObjectKeys(tenant.tenantId, partition.month, tenant.firstSeq, tenant.lastSeq).object);
    for (const stale of objects.filter((object) => object !== current)) {
      await removeObjects(objectStore, [stale.objectKey, stale.manifestKey]);
      await deleteUploadedColdObject(fleetPool, stale.tenantId, stale.objectKey);
    }
    if (await isIntact(objectStore, current, tenant)) continue;
    await uploadTenantMonth(deps, partition, tenant, progress);
    uploaded += 1;
  }
  const records = stats.reduce((sum, tenant) => sum + tenant.records, 0);
  logger.info({ partition: partition.name, tenants: stats.length, records, uploaded }, 'audit partition archived');
  return { tenants: stats.length, records, uploaded };
}

/**
 * Drops the partition once every tenant's rows in it are in a verified object, in one
 * transaction that also makes those objects the live copy. New rows arriving between the
 * archive and the drop (a late replay into an old month) are caught here: the figures no longer
 * match, nothing is dropped, and the workflow archives again. Already dropped: done.
 */
export async function dropArchivedPartition({ fleetPool, logger }: AuditRetentionDeps, partition: AuditPartition): Promise<DropResult> {
  return fleetPool.transaction(async (tx) => {
    await lockAuditRecordsForDrop(tx, DROP_LOCK_TIMEOUT_MS);
    if (!await partitionExists(tx, partition.name)) return { dropped: true, objects: 0 };
    const stats = await selectPartitionTenantStats(tx, partition.name);
    const objects = await selectUploadedColdObjects(tx, partition.name);
    const unarchived = stats.filter((tenant) => !objects.some((object) => object.tenantId === tenant.tenantId
      && object.records === tenant.records && object.firstSeq === tenant.firstSeq && object.lastSeq === tenant.lastSeq));
    if (unarchived.length > 0) {
      return { dropped: false, reason: `${unarchived.length} tenant(s) have records not in a verified archive object` };
    }
    const live = await dropPartitionMakingObjectsLive(tx, partition.name);
    logger.info({ partition: partition.name, objects: live }, 'audit partition dropped; cold objects are live');
    return { dropped: true, objects: live };
  });
}

/** Deletes cold objects of months that ended before `before` (now minus AUDIT_COLD_YEARS). */
export async function deleteExpiredColdObjects(
  { fleetPool, objectStore, logger }: AuditRetentionDeps, before: string, progress: Progress,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const due = await selectColdObjectsDue(fleetPool, before, DELETE_BATCH);
    for (const object of due) {
      await removeObjects(objectStore, [object.objectKey, object.manifestKey]);
      await markColdObjectDeleted(fleetPool, object.tenantId, object.objectKey);
      deleted += 1;
    }
    progress({ deleted });
    if (due.length < DELETE_BATCH) break;
  }
  if (deleted > 0) logger.info({ deleted, before }, 'expired audit cold objects deleted');
  return deleted;
}
