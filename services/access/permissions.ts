import type { AuthState } from '../../common/context';

/**
 * The system permissions of document 1 (always registered), and the money and files keys. `system.*`
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
  // Money (document 2 names no keys; docs/decisions/money.md).
  'money.read', 'money.write', 'money.reverse',
  // Files (document 2 names no keys either; docs/decisions/files.md).
  'files.read', 'files.write', 'files.delete',
  // Event bus (document 3, Authentication 3; migrations 0032 and 0033).
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
 * Created for every tenant (document 1, Built-in roles). The member role holds nothing itself: it
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
 * Whether permissions held grant the one required (document 1, RBAC): the exact key, then the
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
 * Roles that count as "the admin role" where document 1 names it (the /health probe, the higher rate
 * limit): admin itself and the roles above it.
 */
export const ADMIN_ROLE_NAMES: ReadonlySet<string> = new Set(['admin', 'owner', 'platform_owner']);

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
