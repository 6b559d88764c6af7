import { randomBytes } from 'node:crypto';
import { isProblem } from '../../../common/problems';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { selectCurrentSchemas } from '../../../db/queries/events/schemas.queries';
import { KERNEL_SCHEMAS } from '../../../services/events/kernel-schemas';
import { registerKernelSchemas } from '../../../services/events/schema-registry';
import { ModuleCatalogue } from '../../../services/modules/catalogue';
import { checkManifest, type ModuleManifest } from '../../../services/modules/manifest';
import { installModule, registerCatalogueSchemas } from '../../../services/modules/module-registry';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { appUrl, migrateSharedDatabase } from '../../helpers/db';
import { registerAccount } from '../../helpers/identity';

/**
 * The schema registry in PostgreSQL: the kernel's schemas registered at start-up, a module's when
 * it is installed, and a new manifest version whose schema change is not backward compatible
 * refused at install (docs/reference/events.md#rule-8), with nothing of the install written.
 */

let gateway: TestGateway;
let app: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  [gateway, app] = await Promise.all([startTestGateway(), createDbPool(appUrl(), { maxPoolSize: 2, name: 'schema-registry' })]);
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await app?.end();
});

/** A module of its own per test run (the registry is platform-wide), publishing `<slug>.order.placed`. */
function moduleWith(slug: string, version: string, schema: Record<string, unknown>): ModuleManifest {
  const checked = checkManifest({
    slug, name: 'Shop', version,
    events: { publishes: [`${slug}.order.placed`], subscribes: [] },
    eventSchemas: { [`${slug}.order.placed`]: { version, schema } },
  }, slug, { maxModels: 10 });
  if (!checked.ok) throw new Error(checked.problems.join('; '));
  return checked.manifest;
}

const order = (extra: Record<string, unknown> = {}, required = ['id']) => ({
  type: 'object', properties: { id: { type: 'string' }, total: { type: 'integer' }, ...extra }, required,
});

describe('the event schema registry', () => {
  it('holds the kernel schemas once the gateway started, and registering them again adds nothing', async () => {
    await gateway.runtime.started;
    const types = KERNEL_SCHEMAS.map((declaration) => declaration.type);
    expect((await selectCurrentSchemas(app, types)).map((row) => [row.type, row.version, row.owner]).sort())
      .toEqual(types.map((type) => [type, '1.0.0', 'kernel']).sort());
    expect(await registerKernelSchemas(app)).toEqual({ added: [], unchanged: types });
  });

  it('registers every catalogue module’s schemas without an install (the gateway does at start-up)', async () => {
    const slug = `shop_${randomBytes(4).toString('hex')}`;
    const catalogue = new ModuleCatalogue([moduleWith(slug, '1.0.0', order())]);
    await registerCatalogueSchemas(app, catalogue);
    await registerCatalogueSchemas(app, catalogue);
    expect((await selectCurrentSchemas(app, [`${slug}.order.placed`])).map((row) => [row.version, row.owner]))
      .toEqual([['1.0.0', `module:${slug}`]]);
  });

  it('registers a module’s schemas at install, takes a compatible new version, and refuses a breaking one', async () => {
    const account = await registerAccount(gateway);
    const caller = { tenantId: account.tenant.id, userId: account.user.id, ip: null, userAgent: null };
    const slug = `shop_${randomBytes(4).toString('hex')}`;
    const type = `${slug}.order.placed`;
    const install = (manifest: ModuleManifest) => installModule({
      db: app, catalogue: new ModuleCatalogue([manifest]), enforcePlanLimits: false, installed: { invalidate: () => undefined },
    }, caller, slug);
    const current = async () => (await selectCurrentSchemas(app, [type])).map((row) => ({ version: row.version, owner: row.owner }));

    await install(moduleWith(slug, '1.0.0', order()));
    expect(await current()).toEqual([{ version: '1.0.0', owner: `module:${slug}` }]);

    // An optional field in a new minor version is compatible.
    await install(moduleWith(slug, '1.1.0', order({ note: { type: 'string' } })));
    expect(await current()).toEqual([{ version: '1.1.0', owner: `module:${slug}` }]);

    // A removed field is not: the install is refused, and neither the schema nor the module's version moves.
    const refused = await install(moduleWith(slug, '1.2.0', order())).catch((error: unknown) => error);
    expect(isProblem(refused) && { type: refused.type, status: refused.status, detail: refused.detail }).toEqual({
      type: 'event-schema-incompatible', status: 409,
      detail: `An event schema cannot be registered: ${type} 1.2.0: $.note: field removed: consumers that read it break; `
        + `${type} 1.2.0: a breaking change needs a new event type`,
    });
    expect(await current()).toEqual([{ version: '1.1.0', owner: `module:${slug}` }]);
    const again = await install(moduleWith(slug, '1.1.0', order({ note: { type: 'string' } })));
    expect(again.installation.version).toBe('1.1.0');
  });
});
