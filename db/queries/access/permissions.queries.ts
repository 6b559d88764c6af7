import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * The permission registry (table permissions, migration 0010): the system keys every tenant reads
 * (tenant_id NULL, module 'system') and the module keys each tenant registers when it installs a
 * module. Every function runs in a withTenant transaction; row-level security keeps module rows to
 * that tenant, and each statement names the tenant again.
 */

const keysRow = z.object({ keys: z.array(z.string()) });

const registered = z.object({
  key: z.string(),
  module: z.string(),
  description: z.string(),
  archived: z.boolean(),
});
export type RegisteredPermission = z.infer<typeof registered>;

/**
 * Every key the tenant knows, archived ones included (flagged), system keys first. Platform-only
 * keys (`system.*`) are left out: no tenant role may hold them, so no tenant needs to see them.
 */
export function selectTenantPermissions(tx: DatabaseTransactionConnection, tenantId: string): Promise<readonly RegisteredPermission[]> {
  return tx.any(sql.type(registered)`
    SELECT key, module, description, archived_at IS NOT NULL AS archived
    FROM permissions
    WHERE (tenant_id IS NULL OR tenant_id = ${tenantId}) AND NOT starts_with(key, 'system.')
    ORDER BY tenant_id NULLS FIRST, module, key
  `);
}

/** The tenant's archived keys: they grant nothing, whichever role holds them (docs/reference/access.md#rule-5). */
export async function selectArchivedPermissions(tx: DatabaseTransactionConnection, tenantId: string): Promise<string[]> {
  const row = await tx.one(sql.type(keysRow)`
    SELECT coalesce(array_agg(key ORDER BY key), '{}') AS keys
    FROM permissions WHERE tenant_id = ${tenantId} AND archived_at IS NOT NULL
  `);
  return row.keys;
}

export interface ModulePermission {
  key: string;
  description: string;
}

/**
 * Module install: registers the module's keys for the tenant idempotently. A key registered again
 * takes the new description and is restored if it was archived (reinstall). Keys must start with
 * the slug (a CHECK constraint); a slug that is a system key's first segment fails the trigger
 * permissions_check_module.
 */
export async function upsertModulePermissions(
  tx: DatabaseTransactionConnection, tenantId: string, module: string, keys: readonly ModulePermission[],
): Promise<void> {
  if (keys.length === 0) return;
  await tx.query(sql.unsafe`
    INSERT INTO permissions (tenant_id, key, module, description)
    SELECT ${tenantId}, k.key, ${module}, k.description
    FROM unnest(${sql.array(keys.map((k) => k.key), 'text')}, ${sql.array(keys.map((k) => k.description), 'text')}) AS k (key, description)
    ON CONFLICT ON CONSTRAINT permissions_tenant_key
    DO UPDATE SET description = excluded.description, archived_at = NULL, updated_at = now()
  `);
}

/** Module soft delete: its keys stay (roles keep them, with a stale-permissions warning) but grant nothing. */
export async function archiveModulePermissions(tx: DatabaseTransactionConnection, tenantId: string, module: string): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE permissions SET archived_at = now(), updated_at = now()
    WHERE tenant_id = ${tenantId} AND module = ${module} AND archived_at IS NULL
  `);
}

/** Module reinstall: the roles that kept the keys are fully restored. */
export async function restoreModulePermissions(tx: DatabaseTransactionConnection, tenantId: string, module: string): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE permissions SET archived_at = NULL, updated_at = now()
    WHERE tenant_id = ${tenantId} AND module = ${module} AND archived_at IS NOT NULL
  `);
}
