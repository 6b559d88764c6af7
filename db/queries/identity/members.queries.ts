import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';
import { userProfile } from './users.queries';

/**
 * The users of a tenant as the User of docs/reference/identity.md, read through their memberships. Every query here names
 * the tenant (`m.tenant_id = …`) and row-level security checks it again (memberships, role
 * assignments and accounts are the transaction's tenant's own). Accounts (users) have no tenant_id:
 * an account is global and may belong to several tenants, so a statement on one is scoped through
 * its membership of the named tenant (memberOf).
 * `status` is the account's, except that a membership blocked by this tenant reads as `locked`;
 * `deletedAt` is the membership's soft-delete marker, because deletion is per tenant.
 */
const member = userProfile.extend({
  roles: z.array(z.string()),
  /** The raw states the view is computed from. */
  membershipStatus: z.enum(['active', 'blocked', 'deleted']),
  accountStatus: z.enum(['active', 'locked', 'pending_deletion']),
});
export type Member = z.infer<typeof member>;
export type MemberStatus = Member['status'];

/** The account `userId` is a member of the tenant (a deleted membership included: restore needs it). */
const memberOf = (tenantId: string, userId: string) =>
  sql.fragment`EXISTS (SELECT 1 FROM memberships own WHERE own.tenant_id = ${tenantId} AND own.user_id = ${userId})`;

const viewStatus = sql.fragment`CASE WHEN u.status = 'active' AND m.status = 'blocked' THEN 'locked' ELSE u.status END`;

const memberColumns = sql.fragment`
  u.id, u.email, u.first_name AS "firstName", u.last_name AS "lastName", u.avatar_url AS "avatarUrl",
  u.email_verified AS "emailVerified", u.mfa_enabled AS "mfaEnabled", ${viewStatus} AS status,
  u.created_at AS "createdAt", u.updated_at AS "updatedAt", m.deleted_at AS "deletedAt",
  coalesce((SELECT array_agg(r.name ORDER BY r.name) FROM user_roles ur JOIN roles r ON r.id = ur.role_id
            WHERE ur.tenant_id = m.tenant_id AND ur.user_id = u.id), '{}') AS roles,
  m.status AS "membershipStatus", u.status AS "accountStatus"
`;

export interface MemberFilter {
  /** Keyset position: the last id of the previous page (ids are UUID v7, so this is creation order). */
  afterId?: string;
  limit: number;
  includeDeleted: boolean;
  status?: MemberStatus;
  /** Part of the address, case-insensitive. */
  emailContains?: string;
}

/** A page of the tenant's users in id order; deleted memberships only when asked for. */
export function selectMembers(tx: DatabaseTransactionConnection, tenantId: string, filter: MemberFilter): Promise<readonly Member[]> {
  const conditions = [
    sql.fragment`m.tenant_id = ${tenantId}`,
    filter.afterId ? sql.fragment`u.id > ${filter.afterId}` : sql.fragment`TRUE`,
    filter.includeDeleted ? sql.fragment`TRUE` : sql.fragment`m.status <> 'deleted'`,
    filter.status ? sql.fragment`${viewStatus} = ${filter.status}` : sql.fragment`TRUE`,
    // strpos, not LIKE: % and _ in the search text are plain characters.
    filter.emailContains
      ? sql.fragment`strpos(lower(u.email), lower(${filter.emailContains})) > 0`
      : sql.fragment`TRUE`,
  ];
  return tx.any(sql.type(member)`
    SELECT ${memberColumns}
    FROM memberships m JOIN users u ON u.id = m.user_id
    WHERE ${sql.join(conditions, sql.fragment` AND `)}
    ORDER BY u.id
    LIMIT ${filter.limit}
  `);
}

/** One user of the tenant, deleted or not; null when the account has no membership here. */
export function selectMember(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<Member | null> {
  return tx.maybeOne(sql.type(member)`
    SELECT ${memberColumns}
    FROM memberships m JOIN users u ON u.id = m.user_id
    WHERE m.tenant_id = ${tenantId} AND m.user_id = ${userId}
  `);
}

const email = z.object({ email: z.string() });

/**
 * The addresses of the tenant's active, non-deleted members holding a role named in `roleNames`:
 * whom a notice to the tenant goes to (billing notices: the owners; a rejected upload: owners and admins).
 */
export async function selectRoleHolderEmails(db: CommonQueryMethods, tenantId: string, roleNames: readonly string[]): Promise<string[]> {
  const rows = await db.any(sql.type(email)`
    SELECT DISTINCT u.email
    FROM user_roles ur
    JOIN roles r ON r.id = ur.role_id AND r.tenant_id = ${tenantId} AND r.name = ANY(${sql.array(roleNames, 'text')})
    JOIN memberships m ON m.tenant_id = ur.tenant_id AND m.user_id = ur.user_id AND m.status = 'active'
    JOIN users u ON u.id = ur.user_id AND u.deleted_at IS NULL
    WHERE ur.tenant_id = ${tenantId}
    ORDER BY u.email
  `);
  return rows.map((row) => row.email);
}

/** Locks the membership row, so concurrent changes of one user in one tenant run one after the other. */
export async function lockMembership(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<boolean> {
  return tx.exists(sql.unsafe`SELECT 1 FROM memberships WHERE tenant_id = ${tenantId} AND user_id = ${userId} FOR UPDATE`);
}

const reach = z.object({ otherTenants: z.number(), liveMemberships: z.number() });
export type AccountReach = z.infer<typeof reach>;

/**
 * How far the account reaches beyond this tenant (SECURITY DEFINER users_account_reach of migration
 * 0007): memberships in other tenants, and memberships still live anywhere (this transaction's own
 * changes included). Account-wide by design: counting the other tenants' memberships is the
 * question (may one tenant change a shared account?). It returns counts only, never a row, and the
 * function itself takes "this tenant" from the transaction (current_tenant_id()) and answers zeros
 * unless the account is a member of it, so it takes no tenant argument.
 */
export function selectAccountReach(tx: DatabaseTransactionConnection, userId: string): Promise<AccountReach> {
  return tx.one(sql.type(reach)`
    SELECT other_tenants AS "otherTenants", live_memberships AS "liveMemberships" FROM users_account_reach(${userId})
  `);
}

export interface ProfileChange {
  firstName?: string;
  lastName?: string;
  email?: string;
}

/** The profile fields a write may set; the avatar's URL is the platform's (services/identity/users/avatar.ts), null to clear it. */
export interface AccountChange extends ProfileChange {
  avatarUrl?: string | null;
}

/**
 * Account fields; a new address is unverified until proven. A taken address fails on the unique
 * index users_email_lower (409 conflict through api/http/constraint-problems.ts).
 */
export async function updateAccountProfile(
  tx: DatabaseTransactionConnection, tenantId: string, userId: string, change: AccountChange,
): Promise<void> {
  const sets = [
    ...(change.firstName !== undefined ? [sql.fragment`first_name = ${change.firstName}`] : []),
    ...(change.lastName !== undefined ? [sql.fragment`last_name = ${change.lastName}`] : []),
    ...(change.email !== undefined ? [sql.fragment`email = ${change.email}`, sql.fragment`email_verified = false`] : []),
    ...(change.avatarUrl !== undefined ? [sql.fragment`avatar_url = ${change.avatarUrl}`] : []),
    sql.fragment`updated_at = now()`,
  ];
  await tx.query(sql.unsafe`UPDATE users SET ${sql.join(sets, sql.fragment`, `)} WHERE id = ${userId} AND ${memberOf(tenantId, userId)}`);
}

export async function updateAccountStatus(
  tx: DatabaseTransactionConnection, tenantId: string, userId: string, status: 'active' | 'locked',
): Promise<void> {
  await tx.query(sql.unsafe`UPDATE users SET status = ${status}, updated_at = now() WHERE id = ${userId} AND ${memberOf(tenantId, userId)}`);
}

/** The account-wide soft-delete marker, set when no membership is live any more and cleared on restore. */
export async function updateAccountDeleted(tx: DatabaseTransactionConnection, tenantId: string, userId: string, deleted: boolean): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE users SET deleted_at = ${deleted ? sql.fragment`coalesce(deleted_at, now())` : sql.fragment`NULL`}, updated_at = now()
    WHERE id = ${userId} AND ${memberOf(tenantId, userId)}
  `);
}

/** This tenant's side: active, blocked (locked here) or deleted (soft, with its timestamp). */
export async function updateMembershipStatus(
  tx: DatabaseTransactionConnection,
  tenantId: string,
  userId: string,
  status: 'active' | 'blocked' | 'deleted',
): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE memberships SET status = ${status}, deleted_at = ${status === 'deleted' ? sql.fragment`now()` : sql.fragment`NULL`}
    WHERE tenant_id = ${tenantId} AND user_id = ${userId}
  `);
  // The User a tenant sees changed, and updatedAt is the only timestamp it shows.
  await tx.query(sql.unsafe`UPDATE users SET updated_at = now() WHERE id = ${userId} AND ${memberOf(tenantId, userId)}`);
}

/** Ends every session of the user in the tenant; its sessions in other tenants go on. */
export async function revokeMemberSessions(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE refresh_tokens SET revoked_at = now(), successor_pair = NULL
    WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND revoked_at IS NULL
  `);
}
