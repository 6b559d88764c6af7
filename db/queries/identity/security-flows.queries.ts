import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * Statements of the security flows (verification, reset, invitations, POST /users). Each runs in the
 * transaction of the tenant the one-time token or the caller belongs to; row-level security lets a
 * tenant change only the accounts of its members.
 */

const idRow = z.object({ id: z.string() });
const revokedRow = z.object({ revoked: z.number() });
const nameRow = z.object({ name: z.string() });
const userIdRow = z.object({ userId: z.string() });

/**
 * Marks the address verified, only while the account still has the address the link was sent to
 * (a link to an old address must not verify a new one). False when nothing matched.
 */
export async function markEmailVerified(tx: DatabaseTransactionConnection, userId: string, email: string): Promise<boolean> {
  const row = await tx.maybeOne(sql.type(idRow)`
    UPDATE users SET email_verified = true, updated_at = now()
    WHERE id = ${userId} AND lower(email) = lower(${email}) AND deleted_at IS NULL
    RETURNING id
  `);
  return row !== null;
}

/**
 * Sets the password of an account reached through a link sent to `email`, which also proves the
 * address (so it is marked verified). Same guard as markEmailVerified; deleted accounts are left alone.
 */
export async function updatePasswordByLink(
  tx: DatabaseTransactionConnection,
  userId: string,
  email: string,
  passwordHash: string,
): Promise<boolean> {
  const row = await tx.maybeOne(sql.type(idRow)`
    UPDATE users SET password_hash = ${passwordHash}, email_verified = true, updated_at = now()
    WHERE id = ${userId} AND lower(email) = lower(${email}) AND deleted_at IS NULL
    RETURNING id
  `);
  return row !== null;
}

/** Every session of the account in every tenant (SECURITY DEFINER auth_revoke_user_refresh_tokens, migration 0011). */
export async function revokeAllRefreshTokens(tx: DatabaseTransactionConnection, userId: string): Promise<number> {
  const { revoked } = await tx.one(sql.type(revokedRow)`
    SELECT auth_revoke_user_refresh_tokens(${userId}) AS revoked
  `);
  return revoked;
}

/**
 * Every session of the account in every tenant but `keep` (SECURITY DEFINER auth_revoke_other_refresh_tokens,
 * migration 0041); answers how many sessions it ended.
 */
export async function revokeOtherRefreshTokens(tx: DatabaseTransactionConnection, userId: string, keep: string | null): Promise<number> {
  const { revoked } = await tx.one(sql.type(revokedRow)`
    SELECT auth_revoke_other_refresh_tokens(${userId}, ${keep}) AS revoked
  `);
  return revoked;
}

/** The new password of a signed-in account (POST /auth/change-password); the row was locked by lockMfaState. */
export async function updatePassword(tx: DatabaseTransactionConnection, userId: string, passwordHash: string): Promise<void> {
  await tx.query(sql.unsafe`UPDATE users SET password_hash = ${passwordHash}, updated_at = now() WHERE id = ${userId}`);
}

const member = z.object({
  id: z.string(),
  firstName: z.string(),
  // 'deleted': a member removed with DELETE /users/:id, restorable (migration 0007).
  membershipStatus: z.enum(['active', 'blocked', 'deleted']),
  deletedAt: z.string().nullable(),
});
export type TenantMember = z.infer<typeof member>;

/** The member of the transaction's tenant with this address, if any (other tenants' accounts stay invisible). */
export function selectMemberByEmail(tx: DatabaseTransactionConnection, email: string): Promise<TenantMember | null> {
  return tx.maybeOne(sql.type(member)`
    SELECT u.id, u.first_name AS "firstName", m.status AS "membershipStatus", u.deleted_at AS "deletedAt"
    FROM users u JOIN memberships m ON m.user_id = u.id AND m.tenant_id = current_tenant_id()
    WHERE lower(u.email) = lower(${email})
  `);
}

export async function selectTenantName(tx: DatabaseTransactionConnection): Promise<string> {
  const { name } = await tx.one(sql.type(nameRow)`
    SELECT name FROM tenants WHERE id = current_tenant_id()
  `);
  return name;
}

const role = z.object({ id: z.string(), name: z.string() });
export type RoleRef = z.infer<typeof role>;

/** The tenant's own roles among the given ids or names (platform roles are never assignable here). */
export function selectTenantRoles(
  tx: DatabaseTransactionConnection,
  wanted: { ids: readonly string[]; names: readonly string[] },
): Promise<readonly RoleRef[]> {
  return tx.any(sql.type(role)`
    SELECT id, name FROM roles
    WHERE tenant_id = current_tenant_id()
      AND (id = ANY(${sql.array(wanted.ids, 'uuid')}) OR name = ANY(${sql.array(wanted.names, 'text')}))
    ORDER BY name
  `);
}

/** Adds the membership unless it exists (an invitation accepted by someone who joined meanwhile); true when added. */
export async function ensureMembership(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<boolean> {
  const added = await tx.maybeOne(sql.type(userIdRow)`
    INSERT INTO memberships (tenant_id, user_id) VALUES (${tenantId}, ${userId})
    ON CONFLICT DO NOTHING
    RETURNING user_id AS "userId"
  `);
  return added !== null;
}

/**
 * Assigns those of the roles that still exist in the tenant (a role deleted after an invitation was
 * sent is skipped, not an error); assignments the user already holds stay as they are.
 */
export async function assignRoles(tx: DatabaseTransactionConnection, tenantId: string, userId: string, roleIds: readonly string[]): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO user_roles (tenant_id, user_id, role_id)
    SELECT ${tenantId}, ${userId}, id FROM roles
    WHERE tenant_id = current_tenant_id() AND id = ANY(${sql.array(roleIds, 'uuid')})
    ON CONFLICT DO NOTHING
  `);
}

/** An account created by an invitation: its address is proven by the accepted link. */
export async function markNewAccountVerified(tx: DatabaseTransactionConnection, userId: string): Promise<void> {
  await tx.query(sql.unsafe`UPDATE users SET email_verified = true, updated_at = now() WHERE id = ${userId}`);
}
