import type { AuthState } from '../../common/context';

/**
 * The system permissions of docs/reference/access.md#rule-1 (always registered), and the money and files keys. `system.*`
 * keys are platform-only and never assignable to a tenant role.
 */
export const SYSTEM_PERMISSIONS = [
  'tenants.list', 'tenants.create', 'tenants.update', 'tenants.block', 'tenants.delete',
  'modules.list', 'modules.install', 'modules.configure', 'modules.uninstall',
  'users.list', 'users.create', 'users.update', 'users.delete', 'users.impersonate',
  'roles.list', 'roles.create', 'roles.update', 'roles.delete', 'roles.assign',
  'audit.read', 'audit.export', 'audit.delete',
  'billing.view', 'billing.change', 'billing.export', 'billing.plan.change', 'billing.payment.manage', 'billing.info.update',
  'settings.read', 'settings.update',
  // Money (docs/decisions/money.md).
  'money.read', 'money.write', 'money.reverse',
  // Files (docs/decisions/files.md).
  'files.read', 'files.write', 'files.delete',
  // Event bus (docs/reference/events.md, Resources; migrations 0032 and 0033).
  'events.publish', 'events.subscribe', 'events.dlq.read', 'events.dlq.retry',
  // API keys, the tenant's service accounts (issue 35, migration 0038; docs/decisions/identity.md, API keys).
  'api_keys.manage',
  // Outbound webhooks (issue 35; migration 0040).
  'webhooks.manage',
  'system.shutdown', 'system.backup', 'system.restore',
] as const;

export interface BuiltInRole {
  name: 'owner' | 'admin' | 'member';
  description: string;
  permissions: string[];
}

/**
 * Created for every tenant (docs/reference/access.md#rule-6). The member role holds nothing itself: it
 * reads the modules assigned to the user, which the access-control issue resolves per module.
 */
export const BUILT_IN_ROLES: readonly BuiltInRole[] = [
  { name: 'owner', description: 'Owns the tenant; holds every permission', permissions: ['*'] },
  {
    name: 'admin',
    description: 'Manages users, roles, modules and billing',
    permissions: SYSTEM_PERMISSIONS.filter((key) => !key.startsWith('system.')),
  },
  { name: 'member', description: 'Read-only on the modules assigned to the user', permissions: [] },
];

/**
 * Whether permissions held grant the one required (docs/reference/access.md#rule-3): the exact key, then the
 * module wildcard `<module>.*`, then `*`. A wildcard never reaches into `system.*` for a tenant
 * role, because tenant roles cannot hold system keys or `system.*` in the first place.
 */
export function permits(held: ReadonlySet<string> | readonly string[], required: string): boolean {
  const set = held instanceof Set ? held : new Set(held);
  if (set.has(required) || set.has('*')) return true;
  const dot = required.indexOf('.');
  return dot > 0 && set.has(`${required.slice(0, dot)}.*`);
}

/**
 * Roles that count as "the admin role" (docs/reference/access.md#rule-20: the /health probe, the higher
 * rate limit): admin itself and the roles above it.
 */
export const ADMIN_ROLE_NAMES: ReadonlySet<string> = new Set(['admin', 'owner', 'platform_owner']);

/**
 * The keys that make a member an administrator for REQUIRE_MFA_FOR_ADMINS (docs/reference/identity.md#rule-48):
 * those that change who can get in or what anyone may do (accounts, roles, API keys, impersonation). A holder of
 * one can take over other accounts or reach every other key, so a stolen password alone must not be enough.
 * The owner's `*` and the admin role hold them all; the member role none; a custom role holding any is caught too.
 */
export const MANAGEMENT_PERMISSIONS: readonly string[] = [
  'users.create', 'users.update', 'users.delete', 'users.impersonate',
  'roles.create', 'roles.update', 'roles.delete', 'roles.assign',
  'api_keys.manage',
];

/** Whether the caller's roles grant a permission now (the gateway's PermissionResolver answers it per request). */
export interface PermissionCheck {
  allows(auth: AuthState, permission: string): Promise<boolean>;
}

/**
 * The RBAC versions this gateway keeps: a change made through it calls forget(tenant) as it commits,
 * so its next request reads again without waiting for PostgreSQL's announcement.
 */
export interface LocalRbacVersions {
  forget(tenantId: string): void;
}
