import { z } from 'zod';
import { sql, type DatabasePool, type DatabaseTransactionConnection } from '../../pool';
import { fileColumns, fileRow, type FileRow } from './files.queries';

/**
 * The re-scan's statements on `files` (migration 0027; services/files/rescan.ts). It walks the stored
 * files of a window tenant by tenant: the one statement that looks across tenants (which tenant comes
 * next) runs on the owner role's fleet pool and reads only tenant ids; each tenant's files are read
 * and changed in that tenant's transaction on the application role (withTenant), so row-level
 * security checks them again.
 */

const idRow = z.object({ id: z.string() });

/** What the re-scan reads: the files still stored (available, or deleted and restorable); as `f.status` below. */
const STORED = sql.fragment`status IN ('available', 'deleted')`;

/**
 * The first tenant after `afterTenantId` (in id order) with a stored file created in [since, until);
 * null when there is none. Each tenant's EXISTS is one probe of its (tenant_id, created_at, id) index.
 */
export function selectNextRescanTenant(
  fleet: DatabasePool, window: { since: string; until: string }, afterTenantId: string | null,
): Promise<string | null> {
  return fleet.maybeOneFirst(sql.type(idRow)`
    SELECT t.id FROM tenants t
    WHERE (${afterTenantId}::uuid IS NULL OR t.id > ${afterTenantId}::uuid)
      AND EXISTS (
        SELECT 1 FROM files f
        WHERE f.tenant_id = t.id AND f.status IN ('available', 'deleted')
          AND f.created_at >= ${window.since}::timestamptz AND f.created_at < ${window.until}::timestamptz
      )
    ORDER BY t.id
    LIMIT 1
  `);
}

const rescanRow = fileRow.extend({
  /** created_at to the microsecond (ISO 8601): the keyset position, exact whatever precision the row was written with. */
  position: z.string(),
});
export type RescanRow = z.infer<typeof rescanRow>;

/**
 * The tenant's stored files created in [since, until), oldest first by (created_at, id), after
 * `after` (a row's `position` and id) when given. The keyset is written without a row comparison:
 * under row-level security only leakproof operators reach the index (docs/decisions/audit.md).
 */
export function selectRescanFiles(
  tx: DatabaseTransactionConnection, tenantId: string, window: { since: string; until: string },
  after: { createdAt: string; id: string } | undefined, limit: number,
): Promise<readonly RescanRow[]> {
  return tx.any(sql.type(rescanRow)`
    SELECT ${fileColumns}, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "position" FROM files
    WHERE tenant_id = ${tenantId} AND ${STORED}
      AND created_at >= ${window.since}::timestamptz AND created_at < ${window.until}::timestamptz
      ${after ? sql.fragment`AND created_at >= ${after.createdAt}::timestamptz
        AND (created_at > ${after.createdAt}::timestamptz OR id > ${after.id})` : sql.fragment``}
    ORDER BY created_at, id
    LIMIT ${limit}
  `);
}

/**
 * A stored file (available, or deleted and still restorable) → rejected for `reason`, scanned_at
 * now; null when it is no longer stored. object_key and thumbnails stay in the row, so a repeated
 * step still knows which objects to remove.
 */
export function markStoredFileRejected(
  tx: DatabaseTransactionConnection, tenantId: string, fileId: string, reason: string,
): Promise<FileRow | null> {
  return tx.maybeOne(sql.type(fileRow)`
    UPDATE files SET status = 'rejected', rejected_reason = ${reason}, scanned_at = now(), updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${fileId} AND ${STORED}
    RETURNING ${fileColumns}
  `);
}
