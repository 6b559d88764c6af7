import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * The tenant termination (docs/reference/billing.md#rule-27): the read model the workflow's activities
 * keep in tenant_terminations, and the batched statements of its records phase. Each runs on the
 * application role in the terminated tenant's transaction, with the tenant named explicitly too.
 */

const progressRow = z.object({ progress: z.record(z.string(), z.unknown()) });

export const TERMINATION_PHASES = ['deleting_records', 'deleting_files', 'completed'] as const;
export type TerminationPhase = (typeof TERMINATION_PHASES)[number];
export type TerminationStatus = 'in_progress' | 'completed' | 'recovered';

/**
 * Starts the read model of a termination that began at startedAt. A retry of the same start keeps
 * what is there; a new termination of a tenant recovered earlier starts the row afresh.
 */
export async function startTerminationRecord(db: CommonQueryMethods, tenantId: string, startedAt: string): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO tenant_terminations (tenant_id, status, phase, started_at)
    VALUES (${tenantId}, 'in_progress', 'deleting_records', ${startedAt})
    ON CONFLICT (tenant_id) DO UPDATE
      SET status = 'in_progress', phase = 'deleting_records', progress = '{}', started_at = EXCLUDED.started_at,
          updated_at = now(), completed_at = NULL, recovered_at = NULL
      WHERE tenant_terminations.started_at <> EXCLUDED.started_at
  `);
}

/** Moves an in-progress termination to a phase; `completed` also completes it. */
export async function setTerminationPhase(db: CommonQueryMethods, tenantId: string, phase: TerminationPhase): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE tenant_terminations
    SET phase = ${phase}, updated_at = now(),
        status = CASE WHEN ${phase} = 'completed' THEN 'completed' ELSE status END,
        completed_at = CASE WHEN ${phase} = 'completed' THEN now() ELSE completed_at END
    WHERE tenant_id = ${tenantId} AND status = 'in_progress'
  `);
}

/** Merges a phase's progress ({records: {...}} or {files: {...}}) into the read model. */
export async function recordTerminationProgress(db: CommonQueryMethods, tenantId: string, progress: Record<string, unknown>): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE tenant_terminations SET progress = progress || ${sql.jsonb(progress as never)}, updated_at = now()
    WHERE tenant_id = ${tenantId} AND status = 'in_progress'
  `);
}

/** The progress a termination's phases have checkpointed; null when the tenant has no termination. */
export async function selectTerminationProgress(db: CommonQueryMethods, tenantId: string): Promise<Record<string, unknown> | null> {
  return db.maybeOneFirst(sql.type(progressRow)`
    SELECT progress FROM tenant_terminations WHERE tenant_id = ${tenantId}
  `);
}

/** Marks an unfinished termination recovered; false when there was none to recover. */
export async function markTerminationRecovered(db: CommonQueryMethods, tenantId: string): Promise<boolean> {
  const result = await db.query(sql.unsafe`
    UPDATE tenant_terminations SET status = 'recovered', recovered_at = now(), updated_at = now()
    WHERE tenant_id = ${tenantId} AND status = 'in_progress'
  `);
  return result.rowCount > 0;
}

/**
 * The soft delete of the tenant itself: a deleted tenant leaves its members' tenant lists and login
 * choices. Kept as it is by a repeat (the first time stamps); undone by a recovery.
 */
export async function markTenantDeleted(db: CommonQueryMethods, tenantId: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE tenants SET deleted_at = coalesce(deleted_at, now()), updated_at = now() WHERE id = ${tenantId}`);
}

export async function restoreTenant(db: CommonQueryMethods, tenantId: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE tenants SET deleted_at = NULL, updated_at = now() WHERE id = ${tenantId}`);
}

/** Revokes up to `limit` live sessions (refresh tokens) of the tenant; answers how many. */
export async function revokeTenantSessions(db: CommonQueryMethods, tenantId: string, limit: number): Promise<number> {
  const result = await db.query(sql.unsafe`
    UPDATE refresh_tokens SET revoked_at = now(), successor_pair = NULL
    WHERE id IN (SELECT id FROM refresh_tokens WHERE tenant_id = ${tenantId} AND revoked_at IS NULL LIMIT ${limit})
  `);
  return result.rowCount;
}

/** Deletes up to `limit` unredeemed one-time tokens (invitations, resets) issued in the tenant. */
export async function deleteTenantOneTimeTokens(db: CommonQueryMethods, tenantId: string, limit: number): Promise<number> {
  const result = await db.query(sql.unsafe`
    DELETE FROM one_time_tokens WHERE id IN (SELECT id FROM one_time_tokens WHERE tenant_id = ${tenantId} LIMIT ${limit})
  `);
  return result.rowCount;
}

/** Deletes up to `limit` stored idempotency keys (and the responses they replay) of the tenant. */
export async function deleteTenantIdempotencyKeys(db: CommonQueryMethods, tenantId: string, limit: number): Promise<number> {
  const result = await db.query(sql.unsafe`
    DELETE FROM idempotency_keys WHERE (tenant_id, scope, key) IN (
      SELECT tenant_id, scope, key FROM idempotency_keys WHERE tenant_id = ${tenantId} LIMIT ${limit}
    )
  `);
  return result.rowCount;
}

const terminationRow = z.object({
  tenantId: z.string(),
  status: z.enum(['in_progress', 'completed', 'recovered']),
  phase: z.enum(TERMINATION_PHASES),
  progress: z.record(z.string(), z.unknown()),
  startedAt: z.string(),
  updatedAt: z.string(),
  completedAt: z.string().nullable(),
  recoveredAt: z.string().nullable(),
});
export type TerminationRecord = z.infer<typeof terminationRow>;

/** The termination of the transaction's tenant, if it ever had one. */
export function selectTermination(tx: DatabaseTransactionConnection): Promise<TerminationRecord | null> {
  return tx.maybeOne(sql.type(terminationRow)`
    SELECT tenant_id AS "tenantId", status, phase, progress, started_at AS "startedAt", updated_at AS "updatedAt",
           completed_at AS "completedAt", recovered_at AS "recoveredAt"
    FROM tenant_terminations WHERE tenant_id = current_tenant_id()
  `);
}
