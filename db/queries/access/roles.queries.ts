import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * Roles and role assignments as the RBAC routes manage them (tables roles and user_roles of
 * migration 0002). Every statement names the tenant: platform-scoped roles (tenant_id NULL), which
 * row-level security lets the platform tenant read, are never reached through these routes.
 */

const versionRow = z.object({ version: z.number() });
const tenantVersionRow = z.object({ tenantId: z.string(), version: z.number() });
const countRow = z.object({ count: z.number() });

const roleRow = z.object({
  id: z.string(),
  tenantId: z.string(),
  name: z.string(),
  description: z.string(),
  permissions: z.array(z.string()),
  scope: z.literal('tenant'),
  builtIn: z.boolean(),
  createdBy: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type RoleRow = z.infer<typeof roleRow>;

const ROLE_COLUMNS = sql.fragment`
  id, tenant_id AS "tenantId", name, description, permissions, scope, built_in AS "builtIn",
  created_by AS "createdBy", created_at AS "createdAt", updated_at AS "updatedAt"
`;

/**
 * Bumps the tenant's RBAC version and holds its row lock until commit (rbac_lock_tenant, migration
 * 0010). Every RBAC change calls it first, so the counts it then checks against the limits cannot
 * be raced by a concurrent change of the same tenant.
 */
export async function lockTenantRbac(tx: DatabaseTransactionConnection): Promise<number> {
  const row = await tx.one(sql.type(versionRow)`SELECT rbac_lock_tenant() AS version`);
  return row.version;
}

/** The RBAC version of each tenant asked for (0 for a tenant whose roles never changed). */
export async function selectRbacVersions(db: CommonQueryMethods, tenantIds: readonly string[]): Promise<Map<string, number>> {
  const rows = await db.any(sql.type(tenantVersionRow)`
    SELECT tenant_id AS "tenantId", version FROM rbac_versions_of(${sql.array(tenantIds, 'uuid')})
  `);
  return new Map(rows.map((row) => [row.tenantId, row.version]));
}

export interface RolePageCursor {
  name: string;
  id: string;
}

/** One page of the tenant's roles by name (keyset: strictly after the cursor); one row more than asked tells whether a next page exists. */
export function selectRolePage(
  tx: DatabaseTransactionConnection, tenantId: string, after: RolePageCursor | null, limit: number,
): Promise<readonly RoleRow[]> {
  const keyset = after ? sql.fragment`AND (name, id) > (${after.name}, ${after.id})` : sql.fragment``;
  return tx.any(sql.type(roleRow)`
    SELECT ${ROLE_COLUMNS} FROM roles
    WHERE tenant_id = ${tenantId} ${keyset}
    ORDER BY name, id
    LIMIT ${limit}
  `);
}

export function selectRole(tx: DatabaseTransactionConnection, tenantId: string, roleId: string): Promise<RoleRow | null> {
  return tx.maybeOne(sql.type(roleRow)`SELECT ${ROLE_COLUMNS} FROM roles WHERE tenant_id = ${tenantId} AND id = ${roleId}`);
}

export interface NewCustomRole {
  id: string;
  tenantId: string;
  name: string;
  description: string;
  permissions: readonly string[];
  /** Null when an API key created the role (common/context.ts accountIdOf). */
  createdBy: string | null;
}

/** A duplicate name fails on the unique index roles_tenant_name (409 conflict, api/http/constraint-problems.ts). */
export function insertCustomRole(tx: DatabaseTransactionConnection, role: NewCustomRole): Promise<RoleRow> {
  return tx.one(sql.type(roleRow)`
    INSERT INTO roles (id, tenant_id, name, description, permissions, scope, built_in, created_by)
    VALUES (${role.id}, ${role.tenantId}, ${role.name}, ${role.description}, ${sql.array(role.permissions, 'text')},
            'tenant', false, ${role.createdBy})
    RETURNING ${ROLE_COLUMNS}
  `);
}

export interface RoleChanges {
  name: string;
  description: string;
  permissions: readonly string[];
}

export function updateRole(tx: DatabaseTransactionConnection, tenantId: string, roleId: string, changes: RoleChanges): Promise<RoleRow> {
  return tx.one(sql.type(roleRow)`
    UPDATE roles SET name = ${changes.name}, description = ${changes.description},
                     permissions = ${sql.array(changes.permissions, 'text')}, updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${roleId}
    RETURNING ${ROLE_COLUMNS}
  `);
}

/** Assignments go with the role (ON DELETE CASCADE). */
export async function deleteRole(tx: DatabaseTransactionConnection, tenantId: string, roleId: string): Promise<void> {
  await tx.query(sql.unsafe`DELETE FROM roles WHERE tenant_id = ${tenantId} AND id = ${roleId}`);
}

export async function countTenantRoles(tx: DatabaseTransactionConnection, tenantId: string): Promise<number> {
  return tx.oneFirst(sql.type(countRow)`SELECT count(*) AS count FROM roles WHERE tenant_id = ${tenantId}`);
}

export async function countUserRoles(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<number> {
  return tx.oneFirst(sql.type(countRow)`
    SELECT count(*) AS count FROM user_roles WHERE tenant_id = ${tenantId} AND user_id = ${userId}
  `);
}

export async function countRoleHolders(tx: DatabaseTransactionConnection, tenantId: string, roleId: string): Promise<number> {
  return tx.oneFirst(sql.type(countRow)`
    SELECT count(*) AS count FROM user_roles WHERE tenant_id = ${tenantId} AND role_id = ${roleId}
  `);
}

/** Whether the account is a member of the tenant that can hold roles: active membership, account not deleted. */
export function isAssignableUser(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<boolean> {
  return tx.exists(sql.unsafe`
    SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id
    WHERE m.tenant_id = ${tenantId} AND m.user_id = ${userId} AND m.status = 'active' AND u.deleted_at IS NULL
  `);
}

/** True when the assignment is new (assigning a held role again changes nothing). */
export async function insertUserRole(tx: DatabaseTransactionConnection, tenantId: string, userId: string, roleId: string): Promise<boolean> {
  const inserted = await tx.query(sql.unsafe`
    INSERT INTO user_roles (tenant_id, user_id, role_id) VALUES (${tenantId}, ${userId}, ${roleId})
    ON CONFLICT DO NOTHING
  `);
  return inserted.rowCount === 1;
}

/** True when the user held the role. */
export async function deleteUserRole(tx: DatabaseTransactionConnection, tenantId: string, userId: string, roleId: string): Promise<boolean> {
  const deleted = await tx.query(sql.unsafe`
    DELETE FROM user_roles WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND role_id = ${roleId}
  `);
  return deleted.rowCount === 1;
}
