import type { Readable } from 'node:stream';
import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { rowsOf } from '../../stream-rows';
import { sql, type DatabaseTransactionConnection } from '../../pool';
import { chainedRecord } from './audit-records.queries';

/**
 * Retention of the audit store (migration 0009): monthly partitions move to the object store and
 * are dropped; the catalogue of cold objects says which months of which tenant live where. Every
 * function here runs as the owner role in the retention and cold-export activities: they work on
 * partitions and across tenants, which the application role can do neither of.
 */

const existsRow = z.object({ exists: z.boolean() });

const partition = z.object({ name: z.string(), month: z.string() });
export type AuditPartition = z.infer<typeof partition>;

/**
 * The monthly partitions (audit_records_YYYY_MM, see audit_ensure_partition) whose whole month ends
 * at or before `cutoff`, oldest first. The default partition is never one of them.
 */
export function selectPartitionsEndingBy(db: CommonQueryMethods, cutoff: string): Promise<readonly AuditPartition[]> {
  return db.any(sql.type(partition)`
    SELECT name, month::text AS month
    FROM (
      SELECT c.relname::text AS name, to_date(substring(c.relname from 15), 'YYYY_MM') AS month
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'audit_records'::regclass AND c.relname ~ '^audit_records_[0-9]{4}_[0-9]{2}$'
    ) AS p
    WHERE (p.month + interval '1 month') AT TIME ZONE 'UTC' <= ${cutoff}::timestamptz
    ORDER BY month
  `);
}

/** Whether the partition is still there (a retried drop finds it gone). */
export function partitionExists(db: CommonQueryMethods, partitionName: string): Promise<boolean> {
  return db.oneFirst(sql.type(existsRow)`SELECT to_regclass(${partitionName}) IS NOT NULL AS exists`);
}

const tenantStats = z.object({ tenantId: z.string(), records: z.number(), firstSeq: z.number(), lastSeq: z.number() });
export type PartitionTenantStats = z.infer<typeof tenantStats>;

/** What a partition holds per tenant: the figures an archive object must match before the drop. */
export function selectPartitionTenantStats(db: CommonQueryMethods, partitionName: string): Promise<readonly PartitionTenantStats[]> {
  return db.any(sql.type(tenantStats)`
    SELECT tenant_id AS "tenantId", count(*) AS records, min(seq) AS "firstSeq", max(seq) AS "lastSeq"
    FROM ${sql.identifier([partitionName])}
    GROUP BY tenant_id
    ORDER BY tenant_id
  `);
}

const archivedRecord = chainedRecord.extend({ storedAt: z.string() });

/** One tenant's records of one partition in seq order, as an object stream (a server-side cursor). */
export function streamPartitionRecords(
  db: CommonQueryMethods, partitionName: string, tenantId: string, onRecords: (records: Readable) => void,
): Promise<unknown> {
  return db.stream(sql.type(archivedRecord)`
    SELECT id, tenant_id AS "tenantId", seq, action, entity_type AS "entityType", entity_id AS "entityId",
           actor_id AS "actorId", actor_ip AS "actorIp", actor_user_agent AS "actorUserAgent",
           impersonator_id AS "impersonatorId", before, after, meta, trace_id AS "traceId", occurred_at AS "timestamp",
           encode(prev_hash, 'hex') AS "prevHash", encode(hash, 'hex') AS "hash", stored_at AS "storedAt"
    FROM ${sql.identifier([partitionName])}
    WHERE tenant_id = ${tenantId}
    ORDER BY seq
  `, (rows) => onRecords(rowsOf(rows)));
}

const coldObject = z.object({
  tenantId: z.string(),
  objectKey: z.string(),
  manifestKey: z.string(),
  month: z.string(),
  partitionName: z.string(),
  firstSeq: z.number(),
  lastSeq: z.number(),
  records: z.number(),
  bytes: z.number(),
  sha256: z.string(),
  state: z.enum(['uploaded', 'live', 'deleted']),
});
export type ColdObject = z.infer<typeof coldObject>;
/** What retention records of an uploaded object: its figures and where its records sit in the chain. */
export type NewColdObject = Omit<ColdObject, 'state'> & { chainRuns: ChainRun[] };

const coldObjectColumns = sql.fragment`
  tenant_id AS "tenantId", object_key AS "objectKey", manifest_key AS "manifestKey", month::text AS month,
  partition_name AS "partitionName", first_seq AS "firstSeq", last_seq AS "lastSeq", records, bytes, sha256, state
`;

/** The archive objects of a partition that is still attached: uploaded, not yet the only copy. */
export function selectUploadedColdObjects(db: CommonQueryMethods, partitionName: string): Promise<readonly ColdObject[]> {
  return db.any(sql.type(coldObject)`
    SELECT ${coldObjectColumns} FROM audit_cold_objects
    WHERE partition_name = ${partitionName} AND state = 'uploaded'
    ORDER BY tenant_id
  `);
}

/** Records an uploaded and verified object; the same object uploaded again replaces its figures. */
export async function upsertUploadedColdObject(db: CommonQueryMethods, object: NewColdObject): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO audit_cold_objects (tenant_id, object_key, manifest_key, month, partition_name, first_seq, last_seq, records, bytes,
                                    sha256, chain_runs)
    VALUES (${object.tenantId}, ${object.objectKey}, ${object.manifestKey}, ${object.month}::date, ${object.partitionName},
            ${object.firstSeq}, ${object.lastSeq}, ${object.records}, ${object.bytes}, ${object.sha256},
            ${JSON.stringify(object.chainRuns)}::jsonb)
    ON CONFLICT (tenant_id, object_key) DO UPDATE
      SET bytes = EXCLUDED.bytes, sha256 = EXCLUDED.sha256, chain_runs = EXCLUDED.chain_runs, uploaded_at = now()
      WHERE audit_cold_objects.state = 'uploaded'
  `);
}

/** Forgets an uploaded object that no longer matches its partition (rows arrived after the upload). */
export async function deleteUploadedColdObject(db: CommonQueryMethods, tenantId: string, objectKey: string): Promise<void> {
  await db.query(sql.unsafe`
    DELETE FROM audit_cold_objects WHERE tenant_id = ${tenantId} AND object_key = ${objectKey} AND state = 'uploaded'
  `);
}

/**
 * Takes the lock that keeps the partition's rows as they are until the transaction ends (the
 * consumer's inserts wait; reads go on), failing rather than queueing behind a long export cursor.
 */
export async function lockAuditRecordsForDrop(tx: DatabaseTransactionConnection, lockTimeoutMs: number): Promise<void> {
  await tx.query(sql.unsafe`SELECT set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`);
  await tx.query(sql.unsafe`LOCK TABLE audit_records IN SHARE ROW EXCLUSIVE MODE`);
}

/**
 * Detaches and drops the partition and makes its uploaded objects the live copy, in the caller's
 * transaction: either the rows are in the database or the catalogue says the objects hold them.
 * The append-only triggers are row and TRUNCATE triggers; DROP fires neither (migration 0003).
 */
export async function dropPartitionMakingObjectsLive(tx: DatabaseTransactionConnection, partitionName: string): Promise<number> {
  await tx.query(sql.unsafe`ALTER TABLE audit_records DETACH PARTITION ${sql.identifier([partitionName])}`);
  await tx.query(sql.unsafe`DROP TABLE ${sql.identifier([partitionName])}`);
  const result = await tx.query(sql.unsafe`
    UPDATE audit_cold_objects SET state = 'live', live_at = now()
    WHERE partition_name = ${partitionName} AND state = 'uploaded'
  `);
  return result.rowCount;
}

/** One tenant's live objects of the months overlapping [sinceMonth, untilMonth], oldest first. */
export function selectLiveColdObjects(
  db: CommonQueryMethods, tenantId: string, sinceMonth: string, untilMonth: string,
): Promise<readonly ColdObject[]> {
  return db.any(sql.type(coldObject)`
    SELECT ${coldObjectColumns} FROM audit_cold_objects
    WHERE tenant_id = ${tenantId} AND state = 'live' AND month BETWEEN ${sinceMonth}::date AND ${untilMonth}::date
    ORDER BY month, first_seq
  `);
}

/** Live objects of months that ended before `before` (the cold retention limit), a batch at a time. */
export function selectColdObjectsDue(db: CommonQueryMethods, before: string, limit: number): Promise<readonly ColdObject[]> {
  return db.any(sql.type(coldObject)`
    SELECT ${coldObjectColumns} FROM audit_cold_objects
    WHERE state = 'live' AND (month + interval '1 month') AT TIME ZONE 'UTC' <= ${before}::timestamptz
    ORDER BY month, tenant_id, object_key
    LIMIT ${limit}
  `);
}

export async function markColdObjectDeleted(db: CommonQueryMethods, tenantId: string, objectKey: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE audit_cold_objects SET state = 'deleted', deleted_at = now()
    WHERE tenant_id = ${tenantId} AND object_key = ${objectKey} AND state = 'live'
  `);
}

/**
 * A stretch of consecutive seqs of one tenant's chain, with the two hashes that link it into the
 * chain around it: the prevHash of its first record and the hash of its last. The catalogue of
 * cold objects keeps the runs of each archive object (migration 0017), so a verifier can step over
 * archived records without reading them.
 */
export interface ChainRun {
  firstSeq: number;
  lastSeq: number;
  prevHash: string;
  lastHash: string;
}
