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
 * The role names a user holds in the transaction's tenant and the union of their permissions
 * (row-level security keeps both to that tenant). A user without roles gets two empty lists.
 */
export function selectRoleGrants(tx: DatabaseTransactionConnection, userId: string): Promise<RoleGrants> {
  return tx.one(sql.type(grants)`
    SELECT coalesce(array_agg(DISTINCT r.name ORDER BY r.name), '{}') AS roles,
           coalesce((SELECT array_agg(DISTINCT p ORDER BY p)
                     FROM user_roles ur2 JOIN roles r2 ON r2.id = ur2.role_id, unnest(r2.permissions) p
                     WHERE ur2.user_id = ${userId}), '{}') AS permissions
    FROM user_roles ur JOIN roles r ON r.id = ur.role_id
    WHERE ur.user_id = ${userId}
  `);
}

/** The union of the permissions of the named roles in the transaction's tenant (the token carries names only). */
export async function selectPermissionsOfRoles(tx: DatabaseTransactionConnection, roleNames: readonly string[]): Promise<string[]> {
  const row = await tx.one(sql.type(z.object({ permissions: z.array(z.string()) }))`
    SELECT coalesce(array_agg(DISTINCT p), '{}') AS permissions
    FROM roles r, unnest(r.permissions) p
    WHERE r.name = ANY(${sql.array(roleNames, 'text')})
  `);
  return row.permissions;
}
