import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * A tenant's installed modules (table tenant_modules, migration 0015). Every function runs in a
 * withTenant transaction; row-level security keeps rows to that tenant, and each statement names
 * the tenant again. Uninstalled modules keep their row with deleted_at set.
 */

const activeRow = z.object({ active: z.boolean() });
const slugsRow = z.object({ slugs: z.array(z.string()) });

const moduleRow = z.object({
  id: z.string(),
  slug: z.string(),
  version: z.string(),
  status: z.enum(['active', 'inactive']),
  config: z.record(z.string(), z.unknown()),
  installedBy: z.string().nullable(),
  installedAt: z.string(),
  updatedAt: z.string(),
  deletedAt: z.string().nullable(),
});
export type TenantModuleRow = z.infer<typeof moduleRow>;
export type ModuleStatus = TenantModuleRow['status'];

const COLUMNS = sql.fragment`
  id, slug, version, status, config, installed_by AS "installedBy", installed_at AS "installedAt",
  updated_at AS "updatedAt", deleted_at AS "deletedAt"
`;

/** Every module the tenant ever installed, uninstalled ones included. */
export function selectTenantModules(tx: DatabaseTransactionConnection, tenantId: string): Promise<readonly TenantModuleRow[]> {
  return tx.any(sql.type(moduleRow)`SELECT ${COLUMNS} FROM tenant_modules WHERE tenant_id = ${tenantId} ORDER BY slug`);
}

/** The tenant's row of a module, locked until commit so a change of it cannot interleave with another. */
export function lockTenantModule(tx: DatabaseTransactionConnection, tenantId: string, slug: string): Promise<TenantModuleRow | null> {
  return tx.maybeOne(sql.type(moduleRow)`
    SELECT ${COLUMNS} FROM tenant_modules WHERE tenant_id = ${tenantId} AND slug = ${slug} FOR UPDATE
  `);
}

/**
 * Whether the tenant has the module installed and active: one row or none. A statement for
 * TenantReader (db/tenant-reads.ts), which runs it in the tenant's transaction like withTenant.
 */
export function moduleActiveStatement(tenantId: string, slug: string) {
  return sql.type(activeRow)`
    SELECT true AS active FROM tenant_modules
    WHERE tenant_id = ${tenantId} AND slug = ${slug} AND status = 'active' AND deleted_at IS NULL
  `;
}

/** The slugs of the modules installed and active for the tenant: what the gateway's module step admits. */
export async function selectActiveModuleSlugs(tx: DatabaseTransactionConnection, tenantId: string): Promise<string[]> {
  const row = await tx.one(sql.type(slugsRow)`
    SELECT coalesce(array_agg(slug ORDER BY slug), '{}') AS slugs
    FROM tenant_modules WHERE tenant_id = ${tenantId} AND status = 'active' AND deleted_at IS NULL
  `);
  return row.slugs;
}

export interface NewInstallation {
  id: string;
  tenantId: string;
  slug: string;
  version: string;
  /** Null when an API key installed the module (common/context.ts accountIdOf). */
  installedBy: string | null;
}

export function insertTenantModule(tx: DatabaseTransactionConnection, module: NewInstallation): Promise<TenantModuleRow> {
  return tx.one(sql.type(moduleRow)`
    INSERT INTO tenant_modules (id, tenant_id, slug, version, installed_by)
    VALUES (${module.id}, ${module.tenantId}, ${module.slug}, ${module.version}, ${module.installedBy})
    RETURNING ${COLUMNS}
  `);
}

/** Reinstall after an uninstall: a new, active installation of the same row; its configuration is kept. */
export function restoreTenantModule(
  tx: DatabaseTransactionConnection, tenantId: string, slug: string, version: string, installedBy: string | null,
): Promise<TenantModuleRow> {
  return tx.one(sql.type(moduleRow)`
    UPDATE tenant_modules
    SET deleted_at = NULL, status = 'active', version = ${version}, installed_by = ${installedBy}, installed_at = now(), updated_at = now()
    WHERE tenant_id = ${tenantId} AND slug = ${slug}
    RETURNING ${COLUMNS}
  `);
}

export interface ModuleChanges {
  version: string;
  status: ModuleStatus;
  config: Record<string, unknown>;
}

/** Sets an installed module's version, status and configuration (the caller passes what it keeps). */
export function updateTenantModule(
  tx: DatabaseTransactionConnection, tenantId: string, slug: string, changes: ModuleChanges,
): Promise<TenantModuleRow> {
  return tx.one(sql.type(moduleRow)`
    UPDATE tenant_modules
    SET version = ${changes.version}, status = ${changes.status}, config = ${sql.jsonb(changes.config as never)}, updated_at = now()
    WHERE tenant_id = ${tenantId} AND slug = ${slug}
    RETURNING ${COLUMNS}
  `);
}

/** Uninstall: the row and the module's data stay, so a reinstall restores them. */
export function softDeleteTenantModule(tx: DatabaseTransactionConnection, tenantId: string, slug: string): Promise<TenantModuleRow> {
  return tx.one(sql.type(moduleRow)`
    UPDATE tenant_modules SET deleted_at = now(), updated_at = now()
    WHERE tenant_id = ${tenantId} AND slug = ${slug}
    RETURNING ${COLUMNS}
  `);
}
