import { createDbPool, type DatabasePool } from '../../../db/pool';
import { provisionModules } from '../../../services/data/provision';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { waitFor } from '../../helpers/http';
import { get, registerAccount } from '../../helpers/identity';
import { ensureCatalogueTopics } from '../../helpers/kafka';
import { installModule, uninstallModule } from '../../helpers/modules';
import { EnforcementDelays, startReplicas, untilFollowing, type Replicas } from '../../helpers/replicas';

/**
 * A module uninstalled through gateway A is gone from gateway B within 1 s: B's installed-modules
 * cache (api/runtime/installed-modules.ts) holds the tenant's set when A commits, and only the
 * module.registry.uninstalled event (outbox → the platform's relay → Kafka → B's consumer,
 * api/runtime/module-cache.ts) can drop it: the cache's TTL is set to 10 minutes on both gateways.
 */
jest.setTimeout(60_000);

let replicas: Replicas;
let owner: DatabasePool;
const delays = new EnforcementDelays();

beforeAll(async () => {
  await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics()]);
  [replicas, owner] = await Promise.all([
    startReplicas({ MODULE_CACHE_TTL_MS: '600000' }), createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'replicas-modules-owner' }),
  ]);
  // The crm tables, as the platform's bring-up provisions them after its migrations.
  await provisionModules(owner, replicas.a.runtime.modules.catalogue.list());
  await Promise.all([untilFollowing(replicas.a), untilFollowing(replicas.b)]);
});

afterAll(async () => {
  delays.print('Module changes through gateway A, enforced by gateway B');
  await replicas?.close();
  await owner?.end();
});

describe('a module uninstalled through gateway A', () => {
  it('gateway B, which answered the module\'s data route 200 from its cache, answers it 404 module-not-found within 1 s', async () => {
    const { a, b } = replicas;
    const tenant = await registerAccount(a);
    // What B's Kafka consumer drops (nothing else calls it on B: the changes are made through A).
    const dropped = jest.spyOn(b.runtime.modules.installed, 'invalidate');
    const droppedFor = () => dropped.mock.calls.filter(([tenantId]) => tenantId === tenant.tenant.id).length;
    expect((await installModule(a, tenant.accessToken, 'crm')).status).toBe(201);
    // The install's own event reaches B too: warmed before it, B would reload after it anyway.
    await waitFor('gateway B to hear of the install', async () => droppedFor() >= 1, 20_000, 20);
    const contacts = () => get(b, '/data/crm/contacts', tenant.accessToken);
    expect((await contacts()).status).toBe(200);
    const hits = b.runtime.modules.installed.stats.hits;
    expect((await contacts()).status).toBe(200);
    expect(b.runtime.modules.installed.stats.hits).toBeGreaterThan(hits);

    const heard = droppedFor();
    expect((await uninstallModule(a, tenant.accessToken, 'crm')).status).toBe(204);
    // Meanwhile B may answer 403: the uninstall archives the module's keys, which B's permission
    // cache hears at once. The module step, before it, must follow too.
    await delays.measure('module uninstalled (404 module-not-found)', Date.now(), contacts,
      (answer) => answer.status === 404 && answer.body.type === b.problemType('module-not-found'));
    expect(droppedFor()).toBeGreaterThan(heard);
  });
});
