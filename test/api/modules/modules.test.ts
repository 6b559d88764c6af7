import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { get, registerAccount } from '../../helpers/identity';
import { configureModule, installModule, uninstallModule, type ModuleView } from '../../helpers/modules';
import { addMember, send } from '../../helpers/rbac';
import { auditRecordsOf, outboxOfType } from '../../helpers/users';

/**
 * The tenant module routes (docs/reference/modules.md, docs/decisions/modules.md): list, install, configure,
 * uninstall and reinstall, with the module's permission keys registered, kept, archived and restored
 * (docs/reference/modules.md, rules 5 to 7), module.registry.* events and audit records in the same
 * transaction, and the RBAC version bumped by every change.
 */

let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'modules-test-owner' });
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

const CRM_KEYS = ['companies', 'contacts'].flatMap((model) => ['read', 'create', 'update', 'delete', 'write'].map((action) => `crm.${model}.${action}`));

const listModules = async (token: string) => (await get<{ data: ModuleView[] }>(gateway, '/modules', token)).body.data;
const crmOf = async (token: string) => (await listModules(token)).find((module) => module.slug === 'crm')!;
const crmKeysOf = async (token: string) => {
  const groups = await get<{ data: { module: string; permissions: { key: string }[] }[] }>(gateway, '/permissions', token);
  return groups.body.data.find((group) => group.module === 'crm')?.permissions.map((p) => p.key).sort() ?? [];
};
const staleOf = async (token: string, roleId: string) =>
  (await get<{ stale_permissions: string[] }>(gateway, `/roles/${roleId}`, token)).body.stale_permissions;
const eventsOf = (tenantId: string, kind: string) => outboxOfType(owner, tenantId, `module.registry.${kind}`);
const rbacVersion = (tenantId: string) =>
  owner.oneFirst(sql.type(z.object({ version: z.number() }))`SELECT version FROM rbac_versions WHERE tenant_id = ${tenantId}`);

describe('GET /modules', () => {
  it('lists every known module; none is installed for a new tenant', async () => {
    const tenant = await registerAccount(gateway);
    const response = await get<{ data: ModuleView[] }>(gateway, '/modules', tenant.accessToken);
    expect(response.status).toBe(200);
    const crm = response.body.data.find((module) => module.slug === 'crm');
    expect(crm).toEqual(expect.objectContaining({
      name: 'CRM', installed: false, status: null, installedVersion: null, config: null, installedAt: null,
      models: ['companies', 'contacts'],
      events: { publishes: ['crm.contact.created', 'crm.contact.updated'], subscribes: ['auth.user.created'] },
    }));
    expect(crm!.permissions.map((p) => p.key).sort()).toEqual([...CRM_KEYS].sort());
    expect(await crmKeysOf(tenant.accessToken)).toEqual([]);
  });
});

describe('a module\'s life cycle', () => {
  it('installs, deactivates, configures, uninstalls and reinstalls crm with its permissions, events and audit records', async () => {
    const tenant = await registerAccount(gateway);
    const token = tenant.accessToken;
    const tenantId = tenant.tenant.id;
    const { version } = gateway.runtime.modules.catalogue.get('crm')!;

    const installed = await installModule(gateway, token, 'crm');
    expect(installed.status).toBe(201);
    expect(installed.body).toEqual(expect.objectContaining({ slug: 'crm', installed: true, status: 'active', installedVersion: version, config: {} }));
    expect(await crmKeysOf(token)).toEqual([...CRM_KEYS].sort());
    const [installEvent] = await eventsOf(tenantId, 'installed');
    const moduleId = String(installEvent.data.module_id);
    expect(installEvent).toEqual({
      type: 'module.registry.installed', partitionKey: moduleId,
      data: expect.objectContaining({ slug: 'crm', version, status: 'active', installed: true, reinstalled: false, tenant_id: tenantId, changed_by: tenant.user.id }),
    });
    expect(await auditRecordsOf(owner, tenantId, 'module.registry.installed')).toEqual([expect.objectContaining({
      entityType: 'module', entityId: moduleId, actorId: tenant.user.id, before: null,
      after: { slug: 'crm', version, status: 'active', config: {}, installed: true },
    })]);

    // Installing again registers the keys again and changes nothing else.
    expect((await installModule(gateway, token, 'crm')).status).toBe(200);
    expect(await eventsOf(tenantId, 'installed')).toHaveLength(1);

    const reader = (await send<{ id: string }>(gateway, 'POST', '/roles', token, { name: 'reader', permission_ids: ['crm.contacts.read'] })).body;

    const deactivated = await configureModule(gateway, token, 'crm', { status: 'inactive' });
    expect(deactivated.status).toBe(200);
    expect(deactivated.body).toEqual(expect.objectContaining({ installed: true, status: 'inactive' }));
    expect(await crmKeysOf(token)).toEqual([...CRM_KEYS].sort());
    expect(await staleOf(token, reader.id)).toEqual([]);

    const configured = await configureModule(gateway, token, 'crm', { status: 'active', config: { region: 'eu', apiKey: 'secret-value' } });
    expect(configured.body).toEqual(expect.objectContaining({ status: 'active', config: { region: 'eu', apiKey: 'secret-value' } }));
    expect((await configureModule(gateway, token, 'crm', { config: { region: 'eu', apiKey: 'secret-value' } })).status).toBe(200);
    const updates = await eventsOf(tenantId, 'updated');
    expect(updates.map((event) => event.data.changes)).toEqual([['status'], ['status', 'config']]);
    expect(updates[0].data).toEqual(expect.objectContaining({ module_id: moduleId, status: 'inactive', previous_status: 'active' }));
    // A configuration may hold secrets: it stays out of the event, and in the audit record.
    expect(JSON.stringify(updates)).not.toContain('secret-value');
    expect((await auditRecordsOf(owner, tenantId, 'module.registry.updated'))[1].after).toEqual(expect.objectContaining({ config: { region: 'eu', apiKey: 'secret-value' } }));

    expect((await uninstallModule(gateway, token, 'crm')).status).toBe(204);
    expect(await crmOf(token)).toEqual(expect.objectContaining({ installed: false, status: null, config: null }));
    expect(await crmKeysOf(token)).toEqual([]);
    expect(await staleOf(token, reader.id)).toEqual(['crm.contacts.read']);
    expect((await eventsOf(tenantId, 'uninstalled')).map((event) => event.data)).toEqual([expect.objectContaining({ module_id: moduleId, installed: false })]);
    for (const again of [uninstallModule(gateway, token, 'crm'), configureModule(gateway, token, 'crm', { status: 'active' })]) {
      const refused = await again;
      expect(refused.status).toBe(404);
      expect(refused.body.type).toBe(gateway.problemType('module-not-found'));
    }

    const reinstalled = await installModule(gateway, token, 'crm');
    expect(reinstalled.status).toBe(201);
    expect(reinstalled.body).toEqual(expect.objectContaining({ installed: true, status: 'active', config: { region: 'eu', apiKey: 'secret-value' } }));
    expect(await crmKeysOf(token)).toEqual([...CRM_KEYS].sort());
    expect(await staleOf(token, reader.id)).toEqual([]);
    expect((await eventsOf(tenantId, 'installed')).map((event) => event.data)).toEqual([
      expect.objectContaining({ reinstalled: false }), expect.objectContaining({ module_id: moduleId, reinstalled: true }),
    ]);
  });

  it('bumps the tenant\'s RBAC version with every change, so cached permissions are reloaded', async () => {
    const tenant = await registerAccount(gateway);
    const versions = [await rbacVersion(tenant.tenant.id)];
    for (const change of [
      () => installModule(gateway, tenant.accessToken, 'crm'),
      () => configureModule(gateway, tenant.accessToken, 'crm', { status: 'inactive' }),
      () => uninstallModule(gateway, tenant.accessToken, 'crm'),
      () => installModule(gateway, tenant.accessToken, 'crm'),
    ]) {
      expect((await change()).status).toBeLessThan(300);
      versions.push(await rbacVersion(tenant.tenant.id));
    }
    versions.reduce((previous, current) => {
      expect(current).toBeGreaterThan(previous);
      return current;
    });
  });
});

describe('refusals', () => {
  it.each(['nope', 'CRM', '..%2F..%2Fetc%2Fpasswd', '__proto__'])('answers 404 module-not-found for the unknown slug %s', async (slug) => {
    const tenant = await registerAccount(gateway);
    for (const attempt of [
      installModule(gateway, tenant.accessToken, slug),
      configureModule(gateway, tenant.accessToken, slug, { status: 'active' }),
      uninstallModule(gateway, tenant.accessToken, slug),
    ]) {
      const refused = await attempt;
      expect(refused.status).toBe(404);
      expect(refused.body.type).toBe(gateway.problemType('module-not-found'));
    }
  });

  it('refuses a slug with a NUL character as invalid input (400), naming the parameter', async () => {
    const tenant = await registerAccount(gateway);
    for (const attempt of [
      installModule(gateway, tenant.accessToken, 'crm%00'),
      configureModule(gateway, tenant.accessToken, 'crm%00', { status: 'active' }),
      uninstallModule(gateway, tenant.accessToken, 'crm%00'),
    ]) {
      const refused = await attempt;
      expect(refused.status).toBe(400);
      expect(refused.body.type).toBe(gateway.problemType('validation-error'));
      expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'slug' })]);
    }
  });

  it('needs modules.list, modules.install, modules.configure and modules.uninstall', async () => {
    const tenant = await registerAccount(gateway);
    const member = await addMember(gateway, owner, tenant.tenant.id);
    expect((await get(gateway, '/modules', member.token)).status).toBe(403);
    expect((await installModule(gateway, member.token, 'crm')).status).toBe(403);
    expect((await get(gateway, '/modules')).status).toBe(401);

    const admin = await addMember(gateway, owner, tenant.tenant.id, 'admin');
    expect((await installModule(gateway, admin.token, 'crm')).status).toBe(201);
    expect((await configureModule(gateway, member.token, 'crm', { status: 'inactive' })).status).toBe(403);
    expect((await uninstallModule(gateway, member.token, 'crm')).status).toBe(403);
    expect((await uninstallModule(gateway, admin.token, 'crm')).status).toBe(204);
  });

  it('validates the configuration request', async () => {
    const tenant = await registerAccount(gateway);
    await installModule(gateway, tenant.accessToken, 'crm');
    for (const body of [{}, { status: 'paused' }, { config: 'text' }, { config: [] }, { status: 'active', extra: true }]) {
      const refused = await configureModule(gateway, tenant.accessToken, 'crm', body);
      expect(refused.status).toBe(400);
      expect(refused.body.type).toBe(gateway.problemType('validation-error'));
    }
  });

  it('keeps each tenant\'s installations to itself', async () => {
    const first = await registerAccount(gateway);
    const second = await registerAccount(gateway);
    await installModule(gateway, first.accessToken, 'crm');
    expect(await crmOf(second.accessToken)).toEqual(expect.objectContaining({ installed: false }));
    expect(await crmKeysOf(second.accessToken)).toEqual([]);
    expect((await uninstallModule(gateway, second.accessToken, 'crm')).status).toBe(404);
    expect(await crmOf(first.accessToken)).toEqual(expect.objectContaining({ installed: true }));
  });
});

describe('a manifest the permission registry refuses', () => {
  let modulesDir: string;
  let other: TestGateway;

  beforeAll(async () => {
    // The slug `users` is the first segment of system keys: only the registry (trigger
    // permissions_check_module, migration 0010) knows the system keys, so the manifest loads.
    modulesDir = mkdtempSync(join(tmpdir(), 'modules-'));
    mkdirSync(join(modulesDir, 'users'));
    writeFileSync(join(modulesDir, 'users', 'manifest.json'), JSON.stringify({
      slug: 'users', name: 'Shadow users', version: '1.0.0', permissions: [{ key: 'users.export', description: 'Export users' }],
    }));
    other = await startTestGateway({ env: { MODULES_DIR: modulesDir } });
  });

  afterAll(async () => {
    await other?.close();
    rmSync(modulesDir, { recursive: true, force: true });
  });

  it('answers 400 validation-error and installs nothing', async () => {
    const tenant = await registerAccount(other);
    const refused = await send(other, 'POST', '/modules/users/install', tenant.accessToken);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(expect.objectContaining({
      type: other.problemType('validation-error'), errors: [expect.objectContaining({ field: 'permissions', code: 'INVALID_VALUE' })],
    }));
    const listed = await get<{ data: ModuleView[] }>(other, '/modules', tenant.accessToken);
    expect(listed.body.data).toEqual([expect.objectContaining({ slug: 'users', installed: false })]);
    expect(await eventsOf(tenant.tenant.id, 'installed')).toEqual([]);
  });
});

describe("the plan's modules limit", () => {
  const modulesInUse = (tenantId: string) => owner.maybeOneFirst(sql.type(z.object({ value: z.string() }))`
    SELECT value::text FROM usage_counters WHERE tenant_id = ${tenantId} AND metric = 'modules'`);

  it('counts installs and uninstalls, and refuses an install at the limit with 402 and the limit object', async () => {
    const tenant = await registerAccount(gateway);
    expect((await installModule(gateway, tenant.accessToken, 'crm')).status).toBe(201);
    expect(await modulesInUse(tenant.tenant.id)).toBe('1');
    expect((await installModule(gateway, tenant.accessToken, 'crm')).status).toBe(200);
    expect(await modulesInUse(tenant.tenant.id)).toBe('1');
    expect((await uninstallModule(gateway, tenant.accessToken, 'crm')).status).toBe(204);
    expect(await modulesInUse(tenant.tenant.id)).toBe('0');

    // The free plan allows one module; another module already counts against it.
    await owner.query(sql.unsafe`UPDATE subscriptions SET plan_id = 'free' WHERE tenant_id = ${tenant.tenant.id}`);
    await owner.query(sql.unsafe`UPDATE usage_counters SET value = 1 WHERE tenant_id = ${tenant.tenant.id} AND metric = 'modules'`);
    const refused = await installModule(gateway, tenant.accessToken, 'crm');
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({
      type: gateway.problemType('plan-limit-exceeded'),
      limit: { resource: 'modules', allowed: 1, current: 1, planId: 'free' },
    });
    expect((await crmOf(tenant.accessToken)).installed).toBe(false);
    expect(await modulesInUse(tenant.tenant.id)).toBe('1');
  });
});
