import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModuleCatalogue, ManifestError } from '../../../services/modules/catalogue';
import { checkManifest } from '../../../services/modules/manifest';
import { repoRoot } from '../../../common/paths';

/** Module manifests: the shipped crm module as docs/decisions/modules.md describes it, and every broken manifest refused with its reason. */

const DATA_KEYS = ['read', 'create', 'update', 'delete', 'write'];
/** DATA_MAX_TABLES_PER_MODULE's default. */
const LIMITS = { maxModels: 50 };

describe('the shipped catalogue', () => {
  const catalogue = loadModuleCatalogue(join(repoRoot, 'modules'), LIMITS);
  const crm = catalogue.get('crm')!;

  it('holds crm with its two auto-API models, fields, nullability and foreign key', () => {
    expect(catalogue.list().map((m) => m.slug)).toContain('crm');
    expect(crm.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(crm.models.companies).toEqual({
      autoApi: true,
      fields: { name: { type: 'text', nullable: false }, country: { type: 'text', nullable: true } },
    });
    expect(crm.models.contacts).toEqual({
      autoApi: true,
      fields: {
        firstName: { type: 'text', nullable: false },
        lastName: { type: 'text', nullable: true },
        email: { type: 'text', nullable: true },
        age: { type: 'integer', nullable: true },
        companyId: { type: 'uuid', nullable: true, references: { model: 'companies', field: 'id' } },
        tags: { type: 'jsonb', nullable: true },
      },
    });
    expect(crm.events).toEqual({ publishes: ['crm.contact.created', 'crm.contact.updated'], subscribes: ['auth.user.created'] });
    expect(crm.hooks).toEqual(['beforeCreate', 'beforeUpdate'].flatMap((on) => [
      { model: 'contacts', on, handler: 'refuseNegativeAge' }, { model: 'contacts', on, handler: 'normaliseEmail' },
    ]));
  });

  it('registers the data-layer keys of both models, each once', () => {
    const keys = crm.permissions.map((p) => p.key);
    const expected = ['companies', 'contacts'].flatMap((model) => DATA_KEYS.map((action) => `crm.${model}.${action}`));
    expect([...keys].sort()).toEqual([...expected].sort());
    expect(crm.permissions.every((p) => p.description.length > 0)).toBe(true);
  });

  it('finds modules by slug only through its own map', () => {
    for (const slug of ['../crm', 'constructor', '__proto__', 'CRM', '']) expect(catalogue.get(slug)).toBeUndefined();
  });
});

const valid = () => ({
  slug: 'shop',
  name: 'Shop',
  version: '1.2.0',
  permissions: [{ key: 'shop.orders.refund', description: 'Refund orders' }],
  models: {
    customers: { fields: { name: { type: 'text', nullable: false } } },
    orders: {
      autoApi: true,
      fields: { customerId: { type: 'uuid', references: { model: 'customers', field: 'id' } }, total: { type: 'bigint' } },
    },
  },
  hooks: [{ model: 'orders', on: 'afterCreate', handler: 'notifyWarehouse' }],
  events: { publishes: ['shop.order.created'], subscribes: ['crm.contact.created'] },
});

describe('checkManifest', () => {
  it('fills defaults and adds the data-layer keys (write too) of autoApi models only', () => {
    const checked = checkManifest(valid(), 'shop', LIMITS);
    if (!checked.ok) throw new Error(checked.problems.join('; '));
    expect(checked.manifest.description).toBe('');
    expect(checked.manifest.models.customers.autoApi).toBe(false);
    expect(checked.manifest.permissions.map((p) => p.key)).toEqual([
      'shop.orders.refund', 'shop.orders.read', 'shop.orders.create', 'shop.orders.update', 'shop.orders.delete', 'shop.orders.write',
    ]);
  });

  it('keeps the description of a data-layer key the manifest declares itself', () => {
    const manifest = { ...valid(), permissions: [{ key: 'shop.orders.read', description: 'See orders' }] };
    const checked = checkManifest(manifest, 'shop', LIMITS);
    if (!checked.ok) throw new Error(checked.problems.join('; '));
    expect(checked.manifest.permissions.filter((p) => p.key === 'shop.orders.read')).toEqual([{ key: 'shop.orders.read', description: 'See orders' }]);
  });

  const broken: Array<[string, (m: ReturnType<typeof valid>) => unknown, RegExp]> = [
    ['a key of another module', (m) => ({ ...m, permissions: [{ key: 'crm.contacts.read', description: '' }] }), /must start with shop\./],
    ['a system. key', (m) => ({ ...m, permissions: [{ key: 'system.shutdown', description: '' }] }), /system\.shutdown is reserved/],
    ['a platform. key', (m) => ({ ...m, permissions: [{ key: 'platform.halt', description: '' }] }), /platform\.halt is reserved/],
    ['a malformed key', (m) => ({ ...m, permissions: [{ key: 'shop', description: '' }] }), /permission key/],
    ['a key declared twice', (m) => ({ ...m, permissions: [...m.permissions, ...m.permissions] }), /duplicate/],
    ['a reserved slug', (m) => ({ ...m, slug: 'platform' }), /slug/],
    ['a slug with a path in it', (m) => ({ ...m, slug: '../shop' }), /slug/],
    ['a slug other than its folder', (m) => ({ ...m, slug: 'store' }), /differs from its folder modules\/shop/],
    ['no version', (m) => ({ ...m, version: undefined }), /version/],
    ['an unknown field type', (m) => ({ ...m, models: { orders: { fields: { total: { type: 'money' } } } } }), /type/],
    ['a field named like an implicit column', (m) => ({ ...m, models: { orders: { fields: { id: { type: 'uuid' } } } } }), /id/],
    ['a model without fields', (m) => ({ ...m, models: { orders: { fields: {} } } }), /fields/],
    ['a foreign key to an undeclared model', (m) => ({
      ...m, models: { orders: { fields: { cartId: { type: 'uuid', references: { model: 'carts', field: 'id' } } } } }, hooks: [],
    }), /model carts is not declared/],
    ['a foreign key of the wrong type', (m) => ({
      ...m, models: { ...m.models, orders: { fields: { customerId: { type: 'text', references: { model: 'customers', field: 'id' } } } } },
    }), /customers\.id is not a text field/],
    ['a reference to a field other than the id', (m) => ({
      ...m, models: { ...m.models, orders: { fields: { customerName: { type: 'text', references: { model: 'customers', field: 'name' } } } } },
    }), /customers\.name cannot be referenced, only customers\.id/],
    ['a reference to an inherited property name', (m) => ({
      ...m, models: { orders: { fields: { cartId: { type: 'uuid', references: { model: 'constructor', field: 'id' } } } } }, hooks: [],
    }), /model constructor is not declared/],
    ['two references to the same model', (m) => ({
      ...m, models: { ...m.models, orders: { fields: {
        customerId: { type: 'uuid', references: { model: 'customers', field: 'id' } },
        payerId: { type: 'uuid', references: { model: 'customers', field: 'id' } },
      } } },
    }), /models\.orders: its relations to customers \(orders\.customerId, orders\.payerId\) would be ambiguous in select=/],
    ['a model referencing itself', (m) => ({
      ...m, models: { ...m.models, customers: { fields: { parentId: { type: 'uuid', references: { model: 'customers', field: 'id' } } } } },
    }), /models\.customers: its relations to customers .* ambiguous/],
    ['two models referencing each other', (m) => ({
      ...m, models: { ...m.models, customers: { fields: { lastOrderId: { type: 'uuid', references: { model: 'orders', field: 'id' } } } } },
    }), /its relations to orders \(customers\.lastOrderId, orders\.customerId\) would be ambiguous/],
    ['a model named models (the introspection path)', (m) => ({ ...m, models: { ...m.models, models: { fields: { name: { type: 'text' } } } } }),
      /models\.models: the name is reserved/],
    ['more models than DATA_MAX_TABLES_PER_MODULE', (m) => ({
      ...m, hooks: [], models: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`table_${i}`, { fields: { name: { type: 'text' } } }])),
    }), /models: 51 models, at most 50 per module/],
    ['a hook on an undeclared model', (m) => ({ ...m, hooks: [{ model: 'carts', on: 'afterCreate', handler: 'x' }] }), /hooks\[0\]\.model carts/],
    ['a hook on an unknown event', (m) => ({ ...m, hooks: [{ model: 'orders', on: 'whenever', handler: 'x' }] }), /on/],
    ['publishing another module\'s event', (m) => ({ ...m, events: { publishes: ['crm.contact.created'], subscribes: [] } }), /must start with shop\./],
    ['a malformed event type', (m) => ({ ...m, events: { publishes: ['shop.created'], subscribes: [] } }), /event type/],
    ['an unknown member', (m) => ({ ...m, routes: [] }), /routes/],
  ];

  it('accepts a file field (a files-service id) and exactly DATA_MAX_TABLES_PER_MODULE models', () => {
    const models = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`table_${i}`, { fields: { avatar: { type: 'file' } } }]));
    const checked = checkManifest({ ...valid(), hooks: [], models }, 'shop', LIMITS);
    if (!checked.ok) throw new Error(checked.problems.join('; '));
    expect(checked.manifest.models.table_0.fields.avatar).toEqual({ type: 'file', nullable: true });
  });

  it('takes the model limit from its caller', () => {
    const checked = checkManifest(valid(), 'shop', { maxModels: 1 });
    expect(checked).toEqual({ ok: false, problems: ['models: 2 models, at most 1 per module (one table each)'] });
  });

  it.each(broken)('refuses %s', (_what, change, reason) => {
    const checked = checkManifest(change(valid()), 'shop', LIMITS);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.problems.join('; ')).toMatch(reason);
  });
});

describe('loadModuleCatalogue', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'modules-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (folder: string, text: string) => {
    mkdirSync(join(dir, folder), { recursive: true });
    writeFileSync(join(dir, folder, 'manifest.json'), text);
  };

  it('loads every folder\'s manifest', () => {
    write('shop', JSON.stringify(valid()));
    write('crm', JSON.stringify({ ...valid(), slug: 'crm', permissions: [], hooks: [], models: {}, events: {} }));
    expect(loadModuleCatalogue(dir, LIMITS).list().map((m) => m.slug)).toEqual(['crm', 'shop']);
  });

  it.each([
    ['a manifest that is not JSON', () => write('shop', '{ "slug": '), /shop\/manifest\.json is not JSON/],
    ['an invalid manifest, naming the file and each mistake', () => write('shop', JSON.stringify({ ...valid(), version: 'one', name: '' })),
      /shop\/manifest\.json is invalid: name is not allowed to be empty; version .*semantic version/],
    ['a folder without a manifest', () => mkdirSync(join(dir, 'shop')), /module shop: .*manifest\.json is missing/],
  ])('stops at %s', (_what, arrange, message) => {
    arrange();
    expect(() => loadModuleCatalogue(dir, LIMITS)).toThrow(ManifestError);
    expect(() => loadModuleCatalogue(dir, LIMITS)).toThrow(message);
  });

  it('stops when the folder does not exist', () => {
    expect(() => loadModuleCatalogue(join(dir, 'missing'), LIMITS)).toThrow(/MODULES_DIR/);
  });
});
