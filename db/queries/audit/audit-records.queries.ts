import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';
import { auditRecordRow } from './audit-read.queries';

/**
 * The audit store (migration 0003): records partitioned by month, chained per tenant through
 * audit_chain_heads. Writes come from the audit consumer as the owner role; reads by platform_app
 * are limited to one tenant by row-level security. Hashes are bytea in the table and hex here.
 */

const idRow = z.object({ id: z.string() });

/** Creates the partition of the month of `monthStart` (YYYY-MM-01, UTC) unless it exists. */
export async function ensureAuditPartition(db: CommonQueryMethods, monthStart: string): Promise<void> {
  await db.query(sql.unsafe`SELECT audit_ensure_partition(${monthStart}::date)`);
}

const chainHead = z.object({ tenantId: z.string(), lastSeq: z.number(), lastHash: z.string() });

export type ChainHead = z.infer<typeof chainHead>;

/**
 * Creates missing heads, then locks the heads of these tenants until the transaction ends. The
 * locks are taken in tenant id order, so two writers with overlapping tenants never deadlock.
 */
export async function lockChainHeads(tx: DatabaseTransactionConnection, tenantIds: readonly string[]): Promise<Map<string, ChainHead>> {
  const sorted = sql.array([...tenantIds].sort(), 'uuid');
  await tx.query(sql.unsafe`
    INSERT INTO audit_chain_heads (tenant_id)
    SELECT tenant_id FROM unnest(${sorted}) AS t(tenant_id)
    ON CONFLICT (tenant_id) DO NOTHING
  `);
  const heads = await tx.any(sql.type(chainHead)`
    SELECT tenant_id AS "tenantId", last_seq AS "lastSeq", encode(last_hash, 'hex') AS "lastHash"
    FROM audit_chain_heads
    WHERE tenant_id = ANY(${sorted})
    ORDER BY tenant_id
    FOR UPDATE
  `);
  return new Map(heads.map((head) => [head.tenantId, head]));
}

export async function advanceChainHeads(tx: DatabaseTransactionConnection, heads: readonly ChainHead[]): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE audit_chain_heads AS h
    SET last_seq = n.last_seq, last_hash = decode(n.last_hash, 'hex'), updated_at = now()
    FROM ${sql.unnest(heads.map((head) => [head.tenantId, head.lastSeq, head.lastHash]), ['uuid', 'int8', 'text'])}
      AS n(tenant_id, last_seq, last_hash)
    WHERE h.tenant_id = n.tenant_id
  `);
}

/**
 * Which of these record ids are stored already (a redelivered event). The time bounds let the
 * planner skip the partitions the records cannot be in.
 */
export async function selectStoredAuditIds(
  tx: DatabaseTransactionConnection, ids: readonly string[], from: string, to: string,
): Promise<Set<string>> {
  const rows = await tx.any(sql.type(idRow)`
    SELECT id FROM audit_records
    WHERE id = ANY(${sql.array(ids, 'uuid')})
      AND occurred_at BETWEEN ${from}::timestamptz AND ${to}::timestamptz
  `);
  return new Set(rows.map((row) => row.id));
}

const json = (value: Record<string, unknown> | null) => (value === null ? null : JSON.stringify(value));

/** One multi-row insert (unnest of column arrays): a batch costs one round trip. */
export async function insertAuditRecords(tx: DatabaseTransactionConnection, records: readonly ChainedRecordRow[]): Promise<void> {
  const tuples = records.map((r) => [
    r.id, r.tenantId, r.seq, r.action, r.entityType, r.entityId, r.actorId, r.actorIp, r.actorUserAgent, r.impersonatorId,
    json(r.before), json(r.after), json(r.meta), r.traceId, r.timestamp, r.prevHash, r.hash,
  ]);
  await tx.query(sql.unsafe`
    INSERT INTO audit_records (id, tenant_id, seq, action, entity_type, entity_id, actor_id, actor_ip, actor_user_agent,
                               impersonator_id, before, after, meta, trace_id, occurred_at, prev_hash, hash)
    SELECT id, tenant_id, seq, action, entity_type, entity_id, actor_id, actor_ip, actor_user_agent,
           impersonator_id, before, after, meta, trace_id, occurred_at, decode(prev_hash, 'hex'), decode(hash, 'hex')
    FROM ${sql.unnest(tuples, [
    'uuid', 'uuid', 'int8', 'text', 'text', 'text', 'text', 'text', 'text', 'text',
    'jsonb', 'jsonb', 'jsonb', 'text', 'timestamptz', 'text', 'text',
  ])} AS r(id, tenant_id, seq, action, entity_type, entity_id, actor_id, actor_ip, actor_user_agent,
           impersonator_id, before, after, meta, trace_id, occurred_at, prev_hash, hash)
  `);
}

export const chainedRecord = auditRecordRow.extend({
  seq: z.number(),
  prevHash: z.string(),
  hash: z.string(),
});

/** A stored record with its link in the tenant's chain (services/audit/chain.ts computes the links). */
export type ChainedRecordRow = z.infer<typeof chainedRecord>;

/**
 * One page of a tenant's chain in seq order, after `afterSeq` and up to `toSeq`: keyset pagination,
 * so a walk of millions of records holds one page at a time.
 */
export function selectChainPage(
  db: CommonQueryMethods, tenantId: string, afterSeq: number, toSeq: number, limit: number,
): Promise<readonly ChainedRecordRow[]> {
  return db.any(sql.type(chainedRecord)`
    SELECT id, tenant_id AS "tenantId", seq, action, entity_type AS "entityType", entity_id AS "entityId",
           actor_id AS "actorId", actor_ip AS "actorIp", actor_user_agent AS "actorUserAgent",
           impersonator_id AS "impersonatorId", before, after, meta, trace_id AS "traceId", occurred_at AS "timestamp",
           encode(prev_hash, 'hex') AS "prevHash", encode(hash, 'hex') AS "hash"
    FROM audit_records
    WHERE tenant_id = ${tenantId} AND seq > ${afterSeq} AND seq <= ${toSeq}
    ORDER BY seq
    LIMIT ${limit}
  `);
}

/** The tenant's chain head, or null when it has no record yet. */
export function selectChainHead(db: CommonQueryMethods, tenantId: string): Promise<ChainHead | null> {
  return db.maybeOne(sql.type(chainHead)`
    SELECT tenant_id AS "tenantId", last_seq AS "lastSeq", encode(last_hash, 'hex') AS "lastHash"
    FROM audit_chain_heads WHERE tenant_id = ${tenantId}
  `);
}

const chainRun = z.object({ firstSeq: z.number(), lastSeq: z.number(), prevHash: z.string(), lastHash: z.string() });

const archivedChainObject = z.object({
  objectKey: z.string(),
  state: z.enum(['live', 'deleted']),
  records: z.number(),
  bytes: z.number(),
  sha256: z.string(),
  /** Null for objects archived before migration 0017: their runs must be read from the object. */
  chainRuns: z.array(chainRun).nullable(),
});

export type ArchivedChainObject = z.infer<typeof archivedChainObject>;

/**
 * The tenant's archived stretches of its chain (live cold objects, and deleted ones whose catalogue
 * row keeps their runs), through the SECURITY DEFINER function of migration 0017: the verifier runs
 * as platform_app, which cannot read the catalogue itself. Only the current tenant's are answered.
 */
export function selectArchivedChain(db: CommonQueryMethods, tenantId: string): Promise<readonly ArchivedChainObject[]> {
  return db.any(sql.type(archivedChainObject)`
    SELECT object_key AS "objectKey", state, records, bytes, sha256, chain_runs AS "chainRuns"
    FROM audit_archived_chain(${tenantId})
  `);
}
