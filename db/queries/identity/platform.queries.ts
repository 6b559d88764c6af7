import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * The platform tenant (tenants.kind = 'platform', at most one) and its platform-scoped Platform
 * Owner role (tenant_id NULL, scope 'platform'). Only the setup command creates them, as the owner
 * database role; the application only asks, under row-level security, whether a caller is the
 * Platform Owner and which tenant an impersonation enters.
 */
export const PLATFORM_OWNER_ROLE = 'platform_owner';

/**
 * Whether the user holds the platform-scoped Platform Owner role through a live membership of the
 * platform tenant, asked in the caller's own tenant transaction. Platform roles are readable only
 * inside the platform tenant and cannot be created by the application (migration 0002), so a
 * customer tenant's custom role of the same name never passes.
 */
export function isPlatformOwner(tx: DatabaseTransactionConnection, userId: string): Promise<boolean> {
  return tx.exists(sql.unsafe`
    SELECT 1
    FROM user_roles ur
    JOIN roles r ON r.id = ur.role_id
    JOIN tenants t ON t.id = ur.tenant_id
    JOIN memberships m ON m.tenant_id = ur.tenant_id AND m.user_id = ur.user_id
    WHERE ur.user_id = ${userId} AND r.scope = 'platform' AND r.tenant_id IS NULL AND r.name = ${PLATFORM_OWNER_ROLE}
      AND t.kind = 'platform' AND m.status = 'active'
  `);
}

const tenantRow = z.object({ id: z.string(), name: z.string(), kind: z.enum(['customer', 'platform']), status: z.string(), deleted: z.boolean() });
export type TenantRow = z.infer<typeof tenantRow>;

/** The transaction's tenant (row-level security shows a tenant its own row only), or null. */
export function selectCurrentTenant(tx: DatabaseTransactionConnection): Promise<TenantRow | null> {
  return tx.maybeOne(sql.type(tenantRow)`
    SELECT id, name, kind, status, deleted_at IS NOT NULL AS deleted FROM tenants WHERE id = current_tenant_id()
  `);
}

const userRef = z.object({ id: z.string(), email: z.string(), mfaEnabled: z.boolean() });

/** The tenant's owner: the earliest live, active member holding the built-in owner role. */
export function selectTenantOwner(tx: DatabaseTransactionConnection): Promise<z.infer<typeof userRef> | null> {
  return tx.maybeOne(sql.type(userRef)`
    SELECT u.id, u.email, u.mfa_enabled AS "mfaEnabled"
    FROM user_roles ur
    JOIN roles r ON r.id = ur.role_id AND r.built_in AND r.name = 'owner'
    JOIN memberships m ON m.tenant_id = ur.tenant_id AND m.user_id = ur.user_id AND m.status = 'active'
    JOIN users u ON u.id = ur.user_id AND u.deleted_at IS NULL AND u.status = 'active'
    ORDER BY m.created_at, u.id
    LIMIT 1
  `);
}

// --- The setup command (owner role, no row-level security) ---------------------------------------

const idRow = z.object({ id: z.string() });

export async function selectPlatformTenantId(tx: DatabaseTransactionConnection): Promise<string | null> {
  return (await tx.maybeOne(sql.type(idRow)`SELECT id FROM tenants WHERE kind = 'platform'`))?.id ?? null;
}

export async function insertPlatformTenant(tx: DatabaseTransactionConnection, id: string, name: string): Promise<void> {
  await tx.query(sql.unsafe`INSERT INTO tenants (id, name, kind) VALUES (${id}, ${name}, 'platform')`);
}

/** The platform tenant is billed by no one: an active subscription on the unlimited plan. */
export async function insertPlatformSubscription(tx: DatabaseTransactionConnection, id: string, tenantId: string): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO subscriptions (id, tenant_id, plan_id, status, current_period_start, current_period_end)
    VALUES (${id}, ${tenantId}, 'enterprise', 'active', now(), now() + interval '1 month')
  `);
}

export async function selectPlatformOwnerRoleId(tx: DatabaseTransactionConnection): Promise<string | null> {
  return (await tx.maybeOne(sql.type(idRow)`
    SELECT id FROM roles WHERE tenant_id IS NULL AND scope = 'platform' AND name = ${PLATFORM_OWNER_ROLE}
  `))?.id ?? null;
}

/** Every permission, `system.*` included: the wildcard is the Platform Owner's alone among platform roles. */
export async function insertPlatformOwnerRole(tx: DatabaseTransactionConnection, id: string): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO roles (id, tenant_id, name, description, permissions, scope, built_in)
    VALUES (${id}, NULL, ${PLATFORM_OWNER_ROLE}, 'Operates the platform; created by the setup command only',
            ${sql.array(['*'], 'text')}, 'platform', true)
  `);
}

const account = z.object({ id: z.string(), email: z.string(), passwordHash: z.string().nullable(), deleted: z.boolean() });

export function selectAccountByEmail(tx: DatabaseTransactionConnection, email: string): Promise<z.infer<typeof account> | null> {
  return tx.maybeOne(sql.type(account)`
    SELECT id, email, password_hash AS "passwordHash", deleted_at IS NOT NULL AS deleted FROM users WHERE lower(email) = lower(${email})
  `);
}

/** The operator gave the address on the command line of the deployment: it counts as verified. */
export async function insertOperatorAccount(
  tx: DatabaseTransactionConnection,
  user: { id: string; email: string; passwordHash: string },
): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO users (id, email, password_hash, email_verified, first_name, last_name)
    VALUES (${user.id}, ${user.email}, ${user.passwordHash}, true, 'Platform', 'Owner')
  `);
}

const ownerRow = z.object({ userId: z.string(), email: z.string() });

/** The accounts that hold the Platform Owner role (there is one, unless an operator added more by hand). */
export function selectPlatformOwners(tx: DatabaseTransactionConnection): Promise<readonly z.infer<typeof ownerRow>[]> {
  return tx.any(sql.type(ownerRow)`
    SELECT u.id AS "userId", u.email
    FROM user_roles ur JOIN roles r ON r.id = ur.role_id JOIN users u ON u.id = ur.user_id
    WHERE r.tenant_id IS NULL AND r.scope = 'platform' AND r.name = ${PLATFORM_OWNER_ROLE}
    ORDER BY ur.created_at
  `);
}

export function hasMembership(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<boolean> {
  return tx.exists(sql.unsafe`SELECT 1 FROM memberships WHERE tenant_id = ${tenantId} AND user_id = ${userId}`);
}

/** Serializes concurrent setup runs (a transaction-level advisory lock, released at commit). */
export async function lockPlatformSetup(tx: DatabaseTransactionConnection): Promise<void> {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtext('platform.setup-owner'))`);
}
