import { accountIdOf } from '../../common/context';
import { isDeepStrictEqual } from 'node:util';
import { newId } from '../../common/ids';
import { problems } from '../../common/problems';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { archiveModulePermissions, upsertModulePermissions } from '../../db/queries/access/permissions.queries';
import { lockTenantRbac } from '../../db/queries/access/roles.queries';
import {
  insertTenantModule, lockTenantModule, restoreTenantModule, selectActiveModuleSlugs, selectTenantModules, softDeleteTenantModule,
  updateTenantModule, type ModuleStatus, type TenantModuleRow,
} from '../../db/queries/modules/tenant-modules.queries';
import { retryTransient } from '../../db/retry';
import { withTenant } from '../../db/tenant';
import type { Caller } from '../../common/context';
import type { LocalRbacVersions } from '../access/permissions';
import type { ModuleCatalogue } from './catalogue';
import { publishedSchemas, type ModuleManifest } from './manifest';
import { registerSchemas } from '../events/schema-registry';
import { recordModuleChange } from './module-changes';
import { adjustUsage } from '../../db/queries/billing/usage.queries';
import { checkCreationLimitIn } from '../billing/limits';

/**
 * A tenant's modules (docs/decisions/modules.md): list, install, configure and
 * uninstall the modules of the catalogue. Every change runs in one transaction of the caller's
 * tenant that first takes the tenant's RBAC lock (a module's keys are part of the tenant's
 * permission registry; the lock also bumps the RBAC version the permission cache checks), changes
 * the tenant_modules row and the module's permission keys together, and writes the
 * module.registry.* event and the audit record. After the commit this process's installed-modules
 * cache and RBAC versions forget the tenant; other gateway processes hear it from Kafka (and from the
 * database's RBAC version announcement).
 */

export interface ModuleRegistryDeps {
  db: DatabasePool;
  catalogue: ModuleCatalogue;
  /** This gateway's installed-modules cache (api/runtime/installed-modules.ts): a change drops the tenant's set as it commits. */
  installed: { invalidate(tenantId: string): void };
  /** Whether the plan's `modules` limit is enforced (BILLING_ENABLED); installs are counted either way. */
  enforcePlanLimits: boolean;
  /** This gateway's RBAC versions: archived or restored keys apply to its next request without waiting for the announcement. */
  versions?: LocalRbacVersions;
}

/** A module of the catalogue with the tenant's installation (null when never installed). */
export interface TenantModule {
  manifest: ModuleManifest;
  installation: TenantModuleRow | null;
}

export const isInstalled = (installation: TenantModuleRow | null): installation is TenantModuleRow =>
  installation !== null && installation.deletedAt === null;

function manifestOrNotFound(deps: ModuleRegistryDeps, slug: string): ModuleManifest {
  const manifest = deps.catalogue.get(slug);
  if (!manifest) throw problems.moduleNotFound(slug);
  return manifest;
}

async function installedOrNotFound(tx: DatabaseTransactionConnection, tenantId: string, slug: string): Promise<TenantModuleRow> {
  const row = await lockTenantModule(tx, tenantId, slug);
  if (!isInstalled(row)) throw problems.moduleNotFound(slug);
  return row;
}

function moduleChange<T>(deps: ModuleRegistryDeps, caller: Caller, work: (tx: DatabaseTransactionConnection) => Promise<T>): Promise<T> {
  return retryTransient(() => withTenant(deps.db, caller.tenantId, async (tx) => {
    await lockTenantRbac(tx);
    return work(tx);
  })).finally(() => {
    deps.installed.invalidate(caller.tenantId);
    deps.versions?.forget(caller.tenantId);
  });
}

/** Every module of the catalogue, with whether and how the tenant has it. */
export async function listModules(deps: ModuleRegistryDeps, caller: Caller): Promise<TenantModule[]> {
  const rows = await withTenant(deps.db, caller.tenantId, (tx) => selectTenantModules(tx, caller.tenantId));
  const bySlug = new Map(rows.map((row) => [row.slug, row]));
  return deps.catalogue.list().map((manifest) => ({ manifest, installation: bySlug.get(manifest.slug) ?? null }));
}

/** The slugs of the modules installed and active for the tenant: what the gateway's module step admits. */
export function activeModuleSlugs(db: DatabasePool, tenantId: string): Promise<string[]> {
  return withTenant(db, tenantId, (tx) => selectActiveModuleSlugs(tx, tenantId));
}

export interface InstallResult extends TenantModule {
  installation: TenantModuleRow;
  /** False when the module was installed already (its keys and version were refreshed). */
  created: boolean;
}

/**
 * Registers the published event schemas of every module of the catalogue (the gateway does at
 * start-up, beside the kernel's). The registry is platform-wide: a tenant that installed a module
 * before the registry existed (migration 0032) publishes against these without installing it again.
 * Idempotent; a module whose schema changed incompatibly is refused (409) and the others still register.
 */
export async function registerCatalogueSchemas(db: DatabasePool, catalogue: ModuleCatalogue): Promise<void> {
  const refused: unknown[] = [];
  for (const manifest of catalogue.list()) {
    await db.transaction((tx) => registerSchemas(tx, `module:${manifest.slug}`, publishedSchemas(manifest))).catch((error: unknown) => refused.push(error));
  }
  if (refused.length > 0) throw refused[0];
}

/**
 * Installs a module for the tenant, or reinstalls it after an uninstall (same id, configuration
 * kept, permissions restored so roles that kept its keys are whole again). Registering the keys is
 * idempotent: a key registered again takes the manifest's description. Installing a module that is
 * installed already re-registers its keys and records a newer manifest version; nothing else changes.
 */
export function installModule(deps: ModuleRegistryDeps, caller: Caller, slug: string): Promise<InstallResult> {
  const manifest = manifestOrNotFound(deps, slug);
  return moduleChange(deps, caller, async (tx) => {
    const existing = await lockTenantModule(tx, caller.tenantId, slug);
    // Every install, a repeated one too: a manifest whose payload schema changed incompatibly is refused (409).
    await registerSchemas(tx, `module:${slug}`, publishedSchemas(manifest));
    await upsertModulePermissions(tx, caller.tenantId, slug, manifest.permissions);
    if (isInstalled(existing)) {
      if (existing.version === manifest.version) return { manifest, installation: existing, created: false };
      const after = await updateTenantModule(tx, caller.tenantId, slug, { ...existing, version: manifest.version });
      await recordModuleChange(tx, { tenantId: caller.tenantId, actor: caller, kind: 'updated', before: existing, after });
      return { manifest, installation: after, created: false };
    }
    return { manifest, installation: await startInstallation(deps, tx, caller, manifest, existing), created: true };
  });
}

/**
 * The one place an installation begins (a first install, or a reinstall after an uninstall), so
 * the plan's `modules` limit of billing belongs at its top: it runs under the tenant lock that
 * moduleChange took, so the count it checks cannot race another install.
 */
async function startInstallation(
  deps: ModuleRegistryDeps, tx: DatabaseTransactionConnection, caller: Caller, manifest: ModuleManifest, existing: TenantModuleRow | null,
): Promise<TenantModuleRow> {
  if (deps.enforcePlanLimits) await checkCreationLimitIn(tx, 'modules');
  await adjustUsage(tx, 'modules', 1);
  const { slug, version } = manifest;
  const after = existing
    ? await restoreTenantModule(tx, caller.tenantId, slug, version, accountIdOf(caller.userId))
    : await insertTenantModule(tx, { id: newId(), tenantId: caller.tenantId, slug, version, installedBy: accountIdOf(caller.userId) });
  await recordModuleChange(tx, { tenantId: caller.tenantId, actor: caller, kind: 'installed', before: existing, after });
  return after;
}

export interface ModuleSettings {
  status?: ModuleStatus;
  /** Replaces the module's configuration. */
  config?: Record<string, unknown>;
}

/**
 * Activates or deactivates an installed module and sets its configuration. A deactivated module's
 * routes answer module-not-found, but its permission keys stay active (docs/reference/modules.md#rule-8).
 */
export function configureModule(deps: ModuleRegistryDeps, caller: Caller, slug: string, settings: ModuleSettings): Promise<TenantModule> {
  const manifest = manifestOrNotFound(deps, slug);
  return moduleChange(deps, caller, async (tx) => {
    const before = await installedOrNotFound(tx, caller.tenantId, slug);
    const status = settings.status ?? before.status;
    const config = settings.config ?? before.config;
    if (status === before.status && isDeepStrictEqual(config, before.config)) return { manifest, installation: before };
    const after = await updateTenantModule(tx, caller.tenantId, slug, { version: before.version, status, config });
    await recordModuleChange(tx, { tenantId: caller.tenantId, actor: caller, kind: 'updated', before, after });
    return { manifest, installation: after };
  });
}

/**
 * Uninstalls a module (soft delete): its data and configuration stay, its keys are archived, so
 * they grant nothing and roles that hold them show them as stale until a reinstall restores them.
 */
export async function uninstallModule(deps: ModuleRegistryDeps, caller: Caller, slug: string): Promise<void> {
  manifestOrNotFound(deps, slug);
  await moduleChange(deps, caller, async (tx) => {
    const before = await installedOrNotFound(tx, caller.tenantId, slug);
    const after = await softDeleteTenantModule(tx, caller.tenantId, slug);
    await adjustUsage(tx, 'modules', -1);
    await archiveModulePermissions(tx, caller.tenantId, slug);
    await recordModuleChange(tx, { tenantId: caller.tenantId, actor: caller, kind: 'uninstalled', before, after });
  });
}
