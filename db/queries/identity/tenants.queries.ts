import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/** Runs in the new tenant's own transaction: the row-level security check is id = app.tenant_id. */
export async function insertTenant(tx: DatabaseTransactionConnection, tenant: { id: string; name: string }): Promise<void> {
  await tx.query(sql.unsafe`INSERT INTO tenants (id, name) VALUES (${tenant.id}, ${tenant.name})`);
}

/** Whether the user is an active member of the transaction's tenant. */
export function isActiveMember(tx: DatabaseTransactionConnection, userId: string): Promise<boolean> {
  return tx.exists(sql.unsafe`
    SELECT 1 FROM memberships WHERE user_id = ${userId} AND status = 'active'
  `);
}

export async function insertMembership(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<void> {
  await tx.query(sql.unsafe`INSERT INTO memberships (tenant_id, user_id) VALUES (${tenantId}, ${userId})`);
}

export const userTenant = z.object({ id: z.string(), name: z.string(), logoUrl: z.string().nullable(), role: z.string().nullable() });
export type UserTenant = z.infer<typeof userTenant>;

/**
 * The active tenants of a user across tenants (tenant selection, GET /auth/tenants), through the
 * SECURITY DEFINER function auth_user_tenants of migration 0002.
 */
export function selectUserTenants(db: CommonQueryMethods, userId: string): Promise<readonly UserTenant[]> {
  return db.any(sql.type(userTenant)`
    SELECT id, name, logo_url AS "logoUrl", role FROM auth_user_tenants(${userId})
  `);
}
