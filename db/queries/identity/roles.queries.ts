import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';

export interface NewRole {
  id: string;
  name: string;
  description: string;
  permissions: readonly string[];
}

export async function insertBuiltInRoles(
  tx: DatabaseTransactionConnection,
  tenantId: string,
  createdBy: string,
  roles: readonly NewRole[],
): Promise<void> {
  const rows = roles.map((role) => sql.fragment`
    (${role.id}, ${tenantId}, ${role.name}, ${role.description}, ${sql.array(role.permissions, 'text')}, 'tenant', true, ${createdBy})
  `);
  await tx.query(sql.unsafe`
    INSERT INTO roles (id, tenant_id, name, description, permissions, scope, built_in, created_by)
    VALUES ${sql.join(rows, sql.fragment`, `)}
  `);
}

export async function assignRole(tx: DatabaseTransactionConnection, tenantId: string, userId: string, roleId: string): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO user_roles (tenant_id, user_id, role_id) VALUES (${tenantId}, ${userId}, ${roleId})
  `);
}

const grants = z.object({ roles: z.array(z.string()), permissions: z.array(z.string()) });
export type RoleGrants = z.infer<typeof grants>;

/**
 * What a user may do in the transaction's tenant: the names of the roles held now and the union of
 * their permissions, without the keys the tenant has archived (an uninstalled module's keys grant
 * nothing, docs/reference/access.md#rule-5). Row-level security keeps both to the tenant, and in the
 * platform tenant it includes the platform-scoped role of the Platform Owner. A user without roles
 * (or not a member) gets two empty lists. The query is auth_user_grants (migration 0021), which
 * auth_me and auth_issue_session use too. Serves GET /users/:id/permissions, GET
 * /rbac/users/:id/permissions and the gateway's permission cache.
 */
export function effectivePermissions(tx: DatabaseTransactionConnection, userId: string): Promise<RoleGrants> {
  return tx.one(sql.type(grants)`SELECT roles, permissions FROM auth_user_grants(${userId})`);
}

/** The name the identity flows were written against; the same query. */
export const selectRoleGrants = effectivePermissions;
