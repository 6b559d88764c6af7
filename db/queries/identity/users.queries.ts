import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';

export interface NewUser {
  id: string;
  email: string;
  /**
   * Null: the account signs in through a provider only, or was created by POST /users and its
   * set-password link is not used yet.
   */
  passwordHash: string | null;
  /** Default false: the address is proved by the verification e-mail. */
  emailVerified?: boolean;
  firstName: string;
  lastName: string;
}

/**
 * No RETURNING: the account becomes visible to the tenant (row-level security on users) only once
 * its membership exists. A duplicate address fails on the unique index users_email_lower.
 */
export async function insertUser(tx: DatabaseTransactionConnection, user: NewUser): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO users (id, email, password_hash, email_verified, first_name, last_name)
    VALUES (${user.id}, ${user.email}, ${user.passwordHash}, ${user.emailVerified ?? false}, ${user.firstName}, ${user.lastName})
  `);
}

const loginUser = z.object({
  id: z.string(),
  email: z.string(),
  passwordHash: z.string().nullable(),
  status: z.enum(['active', 'locked', 'pending_deletion']),
  deletedAt: z.string().nullable(),
  mfaEnabled: z.boolean(),
  lastTenantId: z.string().nullable(),
});
export type LoginUser = z.infer<typeof loginUser>;

/**
 * Login happens before a tenant is known: the SECURITY DEFINER function auth_user_for_login
 * (migration 0002) answers this one question for platform_app.
 */
export function selectUserForLogin(db: CommonQueryMethods, email: string): Promise<LoginUser | null> {
  return db.maybeOne(sql.type(loginUser)`
    SELECT id, email, password_hash AS "passwordHash", status, deleted_at AS "deletedAt",
           mfa_enabled AS "mfaEnabled", last_tenant_id AS "lastTenantId"
    FROM auth_user_for_login(${email})
  `);
}

const upgraded = z.object({ upgraded: z.boolean() });

/**
 * Replaces the hash a sign-in has just verified by a current one of the same password (SECURITY DEFINER
 * auth_upgrade_password_hash, migration 0043). False when the account's hash is no longer
 * `verifiedHash` (the password was changed meanwhile, which stays).
 */
export async function upgradePasswordHash(db: CommonQueryMethods, userId: string, verifiedHash: string, newHash: string): Promise<boolean> {
  const row = await db.one(sql.type(upgraded)`
    SELECT auth_upgrade_password_hash(${userId}, ${verifiedHash}, ${newHash}) AS upgraded
  `);
  return row.upgraded;
}

export const userProfile = z.object({
  id: z.string(),
  email: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  avatarUrl: z.string().nullable(),
  emailVerified: z.boolean(),
  mfaEnabled: z.boolean(),
  status: z.enum(['active', 'locked', 'pending_deletion']),
  createdAt: z.string(),
  updatedAt: z.string(),
  deletedAt: z.string().nullable(),
});
export type UserProfile = z.infer<typeof userProfile>;

/** The account as a member of the transaction's tenant (null when it is not one). */
export function selectUserProfile(tx: DatabaseTransactionConnection, userId: string): Promise<UserProfile | null> {
  return tx.maybeOne(sql.type(userProfile)`
    SELECT id, email, first_name AS "firstName", last_name AS "lastName", avatar_url AS "avatarUrl",
           email_verified AS "emailVerified", mfa_enabled AS "mfaEnabled", status,
           created_at AS "createdAt", updated_at AS "updatedAt", deleted_at AS "deletedAt"
    FROM users WHERE id = ${userId}
  `);
}

const profileWithGrants = userProfile.extend({ roles: z.array(z.string()), permissions: z.array(z.string()), rbacVersion: z.number() });
export type ProfileWithGrants = z.infer<typeof profileWithGrants>;

/**
 * GET /auth/me in one statement and one round trip (auth_me, migration 0021): the account as a
 * member of the tenant (as selectUserProfile) with its grants (as effectivePermissions), read now,
 * and the tenant's RBAC version (migration 0010) they are at least as new as; null when the account
 * is no member of the tenant. The version comes from the statement's snapshot (rbac_versions_of is
 * STABLE), which is taken before auth_me, a VOLATILE function, reads the grants in snapshots of its own.
 */
export function selectMe(
  db: CommonQueryMethods, tenantId: string, userId: string,
): Promise<ProfileWithGrants | null> {
  return db.maybeOne(sql.type(profileWithGrants)`
    SELECT id, email, first_name AS "firstName", last_name AS "lastName", avatar_url AS "avatarUrl",
           email_verified AS "emailVerified", mfa_enabled AS "mfaEnabled", status,
           created_at AS "createdAt", updated_at AS "updatedAt", deleted_at AS "deletedAt", roles, permissions,
           v.version AS "rbacVersion"
    FROM auth_me(${tenantId}, ${userId}) CROSS JOIN rbac_versions_of(ARRAY[${tenantId}]::uuid[]) v
  `);
}

/** "Remember my choice" of tenant selection: the next login selects this tenant by itself. */
export async function updateLastTenant(tx: DatabaseTransactionConnection, userId: string, tenantId: string): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE users SET last_tenant_id = ${tenantId}, updated_at = now() WHERE id = ${userId}
  `);
}
