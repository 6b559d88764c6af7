import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';
import { userTenant } from './tenants.queries';

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
  tenants: z.array(userTenant),
});
export type LoginUser = z.infer<typeof loginUser>;

/**
 * Login happens before a tenant is known: the SECURITY DEFINER functions auth_user_for_login and
 * auth_user_tenants (migration 0002) answer for platform_app. The tenants come in the same statement
 * because every sign-in needs them next; the caller reveals them only once the account has proven
 * itself.
 */
export function selectUserForLogin(db: CommonQueryMethods, email: string): Promise<LoginUser | null> {
  return db.maybeOne(sql.type(loginUser)`
    SELECT u.id, u.email, u.password_hash AS "passwordHash", u.status, u.deleted_at AS "deletedAt",
           u.mfa_enabled AS "mfaEnabled", u.last_tenant_id AS "lastTenantId",
           coalesce((SELECT jsonb_agg(jsonb_build_object('id', t.id, 'name', t.name, 'logoUrl', t.logo_url, 'role', t.role) ORDER BY t.n)
                     FROM auth_user_tenants(u.id) WITH ORDINALITY AS t (id, name, logo_url, role, n)), '[]') AS tenants
    FROM auth_user_for_login(${email}) u
  `);
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

const profileWithGrants = userProfile.extend({ roles: z.array(z.string()), permissions: z.array(z.string()) });

/**
 * GET /auth/me in one statement and one round trip (auth_me, migration 0021): the account as a
 * member of the tenant (as selectUserProfile) with its grants (as effectivePermissions), read now;
 * null when the account is no member of the tenant.
 */
export function selectMe(
  db: CommonQueryMethods, tenantId: string, userId: string,
): Promise<z.infer<typeof profileWithGrants> | null> {
  return db.maybeOne(sql.type(profileWithGrants)`
    SELECT id, email, first_name AS "firstName", last_name AS "lastName", avatar_url AS "avatarUrl",
           email_verified AS "emailVerified", mfa_enabled AS "mfaEnabled", status,
           created_at AS "createdAt", updated_at AS "updatedAt", deleted_at AS "deletedAt", roles, permissions
    FROM auth_me(${tenantId}, ${userId})
  `);
}

/** "Remember my choice" of tenant selection: the next login selects this tenant by itself. */
export async function updateLastTenant(tx: DatabaseTransactionConnection, userId: string, tenantId: string): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE users SET last_tenant_id = ${tenantId}, updated_at = now() WHERE id = ${userId}
  `);
}
