import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql } from '../../pool';

/**
 * Reads of the audit API. Every read goes through audit_records_readable (migration 0008), the view
 * that masks the personal fields of anonymized users, never through audit_records itself, and runs
 * under withTenant (row-level security). Lists are newest first with (occurred_at, id) as keyset.
 */

const snapshot = z.record(z.string(), z.unknown()).nullable();

export const auditRecordRow = z.object({
  id: z.string(),
  tenantId: z.string(),
  action: z.string(),
  entityType: z.string(),
  entityId: z.string(),
  actorId: z.string().nullable(),
  actorIp: z.string().nullable(),
  actorUserAgent: z.string().nullable(),
  impersonatorId: z.string().nullable(),
  before: snapshot,
  after: snapshot,
  meta: snapshot,
  traceId: z.string().nullable(),
  timestamp: z.string(),
});

export type AuditRecordRow = z.infer<typeof auditRecordRow>;

const columns = sql.fragment`
  id, tenant_id AS "tenantId", action, entity_type AS "entityType", entity_id AS "entityId",
  actor_id AS "actorId", actor_ip AS "actorIp", actor_user_agent AS "actorUserAgent", impersonator_id AS "impersonatorId",
  before, after, meta, trace_id AS "traceId", occurred_at AS "timestamp"
`;

/** The position after which the next page starts (the last row of the previous page). */
export interface AuditKeyset {
  timestamp: string;
  id: string;
}

export interface AuditRecordFilter {
  /** Exact action, or with `prefix` the start of it. */
  action?: { value: string; prefix: boolean };
  entityType?: string;
  entityId?: string;
  /** As readable: an anonymized actor no longer matches its former id. */
  actorId?: string;
  /** Inclusive. */
  since?: string;
  /** Exclusive. */
  until?: string;
}

/**
 * The strings starting with `prefix` in C collation (bytewise): from the prefix up to, excluding,
 * the prefix with its last character incremented. Exact for the ASCII prefixes the routes accept.
 */
function prefixRange(prefix: string): { from: string; below: string } {
  const last = prefix.charCodeAt(prefix.length - 1);
  return { from: prefix, below: `${prefix.slice(0, -1)}${String.fromCharCode(last + 1)}` };
}

/**
 * One page of a tenant's records, newest first: `limit` rows after `after`.
 *
 * Row-level security lets an index use only leakproof operators (others must wait until the
 * tenant policy has run), and neither LIKE nor a row comparison `(a, b) < (x, y)` is leakproof.
 * So an action prefix is a range of text comparisons in C collation (audit_records_action), and
 * the keyset is `occurred_at <= x` (an index bound) refined by a filter on the rows at x itself.
 */
export function selectAuditRecords(
  db: CommonQueryMethods, tenantId: string, filter: AuditRecordFilter, after: AuditKeyset | undefined, limit: number,
): Promise<readonly AuditRecordRow[]> {
  const conditions = [sql.fragment`tenant_id = ${tenantId}`];
  if (filter.action?.prefix && filter.action.value !== '') {
    const { from, below } = prefixRange(filter.action.value);
    conditions.push(sql.fragment`action COLLATE "C" >= ${from} AND action COLLATE "C" < ${below}`);
  } else if (filter.action && !filter.action.prefix) {
    conditions.push(sql.fragment`action = ${filter.action.value}`);
  }
  if (filter.entityType !== undefined) conditions.push(sql.fragment`entity_type = ${filter.entityType}`);
  if (filter.entityId !== undefined) conditions.push(sql.fragment`entity_id = ${filter.entityId}`);
  if (filter.actorId !== undefined) conditions.push(sql.fragment`actor_id = ${filter.actorId}`);
  if (filter.since !== undefined) conditions.push(sql.fragment`occurred_at >= ${filter.since}::timestamptz`);
  if (filter.until !== undefined) conditions.push(sql.fragment`occurred_at < ${filter.until}::timestamptz`);
  if (after) {
    conditions.push(sql.fragment`occurred_at <= ${after.timestamp}::timestamptz`);
    conditions.push(sql.fragment`(occurred_at < ${after.timestamp}::timestamptz OR id < ${after.id}::uuid)`);
  }
  return db.any(sql.type(auditRecordRow)`
    SELECT ${columns}
    FROM audit_records_readable
    WHERE ${sql.join(conditions, sql.fragment` AND `)}
    ORDER BY occurred_at DESC, id DESC
    LIMIT ${limit}
  `);
}

/** One record of the tenant, or null (unknown, or another tenant's: row-level security hides it). */
export function selectAuditRecord(db: CommonQueryMethods, tenantId: string, id: string): Promise<AuditRecordRow | null> {
  return db.maybeOne(sql.type(auditRecordRow)`
    SELECT ${columns} FROM audit_records_readable WHERE tenant_id = ${tenantId} AND id = ${id}
  `);
}
