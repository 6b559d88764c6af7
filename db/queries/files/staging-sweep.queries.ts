import { z } from 'zod';
import { sql, type DatabasePool } from '../../pool';

/**
 * The staging sweep's one look across tenants (services/files/staging-sweep.ts). It runs on the
 * owner role's fleet pool and reads only which files of which tenant to look at; each file is read
 * again in its tenant's transaction on the application role (withTenant) before its scan is started.
 */

const sweepRow = z.object({
  tenantId: z.string(),
  id: z.string(),
  /** created_at to the microsecond (ISO 8601): the keyset position, exact whatever precision the row was written with. */
  position: z.string(),
});
export type StagingSweepRow = z.infer<typeof sweepRow>;

/** Where a page of the sweep ends: the last file's created_at (its `position`) and id. */
export interface StagingSweepPosition {
  createdAt: string;
  id: string;
}

/**
 * Fleet pool (owner role): the next `limit` pending_scan files recorded before `createdBefore`, of
 * every tenant (or of `tenantId` only), oldest first by (created_at, id), after `after` when given.
 * Served by migration 0036's partial index files_pending_scan.
 */
export function selectStagingSweepPage(
  fleet: DatabasePool,
  page: { createdBefore: string; after: StagingSweepPosition | null; tenantId: string | null; limit: number },
): Promise<readonly StagingSweepRow[]> {
  const { createdBefore, after, tenantId, limit } = page;
  return fleet.any(sql.type(sweepRow)`
    SELECT tenant_id AS "tenantId", id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "position"
    FROM files
    WHERE status = 'pending_scan' AND created_at < ${createdBefore}::timestamptz
      AND (${tenantId}::uuid IS NULL OR tenant_id = ${tenantId}::uuid)
      ${after ? sql.fragment`AND (created_at, id) > (${after.createdAt}::timestamptz, ${after.id}::uuid)` : sql.fragment``}
    ORDER BY created_at, id
    LIMIT ${limit}
  `);
}
