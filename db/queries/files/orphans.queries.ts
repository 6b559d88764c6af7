import { z } from 'zod';
import { sql, type DatabasePool, type DatabaseTransactionConnection } from '../../pool';
import { fileColumns, fileRow, type FileRow } from './files.queries';

/**
 * The orphan sweep's statements (migration 0030, services/files/orphans.ts). Every page is bounded
 * by its LIMIT and keyed on the file id, so no statement grows with a tenant's files. Apart from the
 * fleet's list of tenants, each runs in its tenant's transaction and names the tenant (withTenant).
 * Times are the sweep workflow's (ISO 8601), never the database's clock, so a run replays the same
 * and the time-skipping tests move them.
 */

const idRow = z.object({ id: z.string() });
const markPageRow = z.object({ scanned: z.number(), lastId: z.string().nullable(), marked: z.number() });
const reviewPageRow = z.object({ scanned: z.number(), lastId: z.string().nullable(), cleared: z.number(), due: z.array(z.string()) });

const NOT_REFERENCED = (file: string) => sql.fragment`NOT EXISTS (
  SELECT 1 FROM file_references r WHERE r.tenant_id = ${sql.identifier([file, 'tenant_id'])} AND r.file_id = ${sql.identifier([file, 'id'])}
)`;

/**
 * Fleet pool (owner role): the tenants, after `after` in id order, that have an available file in
 * one of `buckets`, the only tenants the sweep has anything to do for.
 */
export function selectTenantsWithOrphanCandidates(
  fleet: DatabasePool, buckets: readonly string[], after: string | null, limit: number,
): Promise<readonly string[]> {
  return fleet.anyFirst(sql.type(idRow)`
    SELECT t.id FROM tenants t
    WHERE (${after}::uuid IS NULL OR t.id > ${after}::uuid)
      AND EXISTS (SELECT 1 FROM files f WHERE f.tenant_id = t.id AND f.status = 'available' AND f.bucket = ANY(${sql.array(buckets, 'text')}))
    ORDER BY t.id
    LIMIT ${limit}
  `);
}

/** One page of a sweep step: how many files it looked at and the last one's id (the next page starts after it). */
export interface SweepPage {
  scanned: number;
  lastId: string | null;
}

export interface MarkPage extends SweepPage {
  marked: number;
}

/**
 * Marks, among the next `limit` available unmarked files of `buckets` uploaded before
 * `createdBefore`, those no one references: orphaned_at = `asOf`. The page is taken before the
 * reference check, so a tenant whose files are all referenced is still read page by page.
 */
export function markOrphanPage(
  tx: DatabaseTransactionConnection,
  page: { tenantId: string; buckets: readonly string[]; createdBefore: string; asOf: string; after: string | null; limit: number },
): Promise<MarkPage> {
  const { tenantId, buckets, createdBefore, asOf, after, limit } = page;
  return tx.one(sql.type(markPageRow)`
    WITH page AS (
      SELECT id FROM files
      WHERE tenant_id = ${tenantId} AND status = 'available' AND orphaned_at IS NULL
        AND bucket = ANY(${sql.array(buckets, 'text')}) AND created_at < ${createdBefore}::timestamptz
        AND (${after}::uuid IS NULL OR id > ${after}::uuid)
      ORDER BY id
      LIMIT ${limit}
    ), marked AS (
      UPDATE files f SET orphaned_at = ${asOf}::timestamptz
      FROM page
      WHERE f.tenant_id = ${tenantId} AND f.id = page.id AND f.status = 'available' AND f.orphaned_at IS NULL AND ${NOT_REFERENCED('f')}
      RETURNING f.id
    )
    SELECT (SELECT count(*) FROM page)::int AS scanned,
           (SELECT id FROM page ORDER BY id DESC LIMIT 1) AS "lastId",
           (SELECT count(*) FROM marked)::int AS marked
  `);
}

export interface ReviewPage extends SweepPage {
  /** Marks cleared: the file is referenced again, or its bucket is no longer swept. */
  cleared: number;
  /** Files marked at or before the cutoff and still unreferenced: due for the purge. */
  due: string[];
}

/**
 * Reviews the next `limit` marked files: clears the mark of those referenced again (the write that
 * referenced them normally has; this is the safety net) or outside `buckets`, and answers those due.
 */
export function reviewOrphanPage(
  tx: DatabaseTransactionConnection,
  page: { tenantId: string; buckets: readonly string[]; orphanedBy: string; after: string | null; limit: number },
): Promise<ReviewPage> {
  const { tenantId, buckets, orphanedBy, after, limit } = page;
  return tx.one(sql.type(reviewPageRow)`
    WITH page AS (
      SELECT id, tenant_id, bucket, orphaned_at FROM files
      WHERE tenant_id = ${tenantId} AND status = 'available' AND orphaned_at IS NOT NULL
        AND (${after}::uuid IS NULL OR id > ${after}::uuid)
      ORDER BY id
      LIMIT ${limit}
    ), kept AS (
      SELECT id FROM page p WHERE NOT (${NOT_REFERENCED('p')}) OR p.bucket <> ALL(${sql.array(buckets, 'text')})
    ), cleared AS (
      UPDATE files f SET orphaned_at = NULL FROM kept
      WHERE f.tenant_id = ${tenantId} AND f.id = kept.id
      RETURNING f.id
    )
    SELECT (SELECT count(*) FROM page)::int AS scanned,
           (SELECT id FROM page ORDER BY id DESC LIMIT 1) AS "lastId",
           (SELECT count(*) FROM cleared)::int AS cleared,
           coalesce((SELECT array_agg(id ORDER BY id) FROM page
                     WHERE orphaned_at <= ${orphanedBy}::timestamptz AND id NOT IN (SELECT id FROM kept)), '{}') AS due
  `);
}

/**
 * available → purged for an orphan marked at or before `orphanedBy` and still unreferenced; null
 * otherwise. A write that references the file clears orphaned_at under the row's lock
 * (references.queries.ts claimReferencedFiles), so this guard, re-read on the row it waited for,
 * never purges a file a committed write references.
 */
export function markOrphanPurged(
  tx: DatabaseTransactionConnection, tenantId: string, fileId: string, orphanedBy: string,
): Promise<FileRow | null> {
  return tx.maybeOne(sql.type(fileRow)`
    UPDATE files SET status = 'purged', updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${fileId} AND status = 'available'
      AND orphaned_at <= ${orphanedBy}::timestamptz AND ${NOT_REFERENCED('files')}
    RETURNING ${fileColumns}
  `);
}

/** A file the sweep has purged (purged with its orphan mark); null for any other. */
export function selectPurgedOrphan(tx: DatabaseTransactionConnection, tenantId: string, fileId: string): Promise<FileRow | null> {
  return tx.maybeOne(sql.type(fileRow)`
    SELECT ${fileColumns} FROM files
    WHERE tenant_id = ${tenantId} AND id = ${fileId} AND status = 'purged' AND orphaned_at IS NOT NULL
  `);
}
