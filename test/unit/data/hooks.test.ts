import type { BeforeHook } from '../../../common/data-hooks';
import { isProblem } from '../../../common/problems';
import { loadDataHooks, type ModuleHookCode } from '../../../services/data/hooks';
import { ManifestError, ModuleCatalogue } from '../../../services/modules/catalogue';
import type { ModuleHook, ModuleManifest } from '../../../services/modules/manifest';
import { crm } from '../../helpers/data-models';

/** The hook registry (services/data/hooks.ts) and the crm module's hook code (modules/crm/hooks.ts). */

const shop = (hooks: ModuleHook[]): ModuleManifest => ({
  slug: 'shop', name: 'Shop', version: '1.0.0', description: '', permissions: [], hooks,
  events: { publishes: [], subscribes: [] },
  models: { orders: { autoApi: true, fields: { note: { type: 'text', nullable: true } } } },
});

const input = (data: Record<string, unknown>) => ({ tenantId: 't', userId: 'u', module: 'shop', model: 'orders', data, record: null });

describe('loadDataHooks', () => {
  it('refuses at start-up a handler the module\'s code does not export, naming each one', () => {
    const catalogue = new ModuleCatalogue([shop([
      { model: 'orders', on: 'beforeCreate', handler: 'missing' },
      // Inherited from Object.prototype, not exported: refused too.
      { model: 'orders', on: 'beforeUpdate', handler: 'toString' },
    ])]);
    const load = () => loadDataHooks(catalogue, new Map([['shop', {}]]));
    expect(load).toThrow(ManifestError);
    expect(load).toThrow(/hooks\[0\] \(orders beforeCreate\) names missing, which modules\/shop\/hooks\.ts does not export.*hooks\[1\] \(orders beforeUpdate\) names toString/);
  });

  it('needs no code for after hooks: they are the outbox events, not calls', () => {
    const catalogue = new ModuleCatalogue([shop([{ model: 'orders', on: 'afterCreate', handler: 'shipIt' }])]);
    expect(() => loadDataHooks(catalogue, new Map())).not.toThrow();
  });

  it('runs a model\'s hooks in manifest order, each on the data the one before left', async () => {
    const code: ModuleHookCode = {
      trim: (({ data }) => ({ note: String(data.note).trim() })) satisfies BeforeHook,
      shout: (({ data }) => ({ note: String(data.note).toUpperCase() })) satisfies BeforeHook,
      keep: (() => undefined) satisfies BeforeHook,
    };
    const hooks = loadDataHooks(new ModuleCatalogue([shop([
      { model: 'orders', on: 'beforeCreate', handler: 'trim' },
      { model: 'orders', on: 'beforeCreate', handler: 'keep' },
      { model: 'orders', on: 'beforeCreate', handler: 'shout' },
      { model: 'orders', on: 'beforeDelete', handler: 'shout' },
    ])]), new Map([['shop', code]]));

    expect(await hooks.runBefore('beforeCreate', input({ note: '  rush ' }))).toEqual({ note: 'RUSH' });
    // No hook of the event: the very same data, so the caller knows nothing changed.
    const data = { note: 'x' };
    expect(await hooks.runBefore('beforeUpdate', input(data))).toBe(data);
    // A delete writes no fields: what its hook returns is not taken.
    expect(await hooks.runBefore('beforeDelete', input({}))).toEqual({});
  });
});

describe('the crm module\'s hooks', () => {
  const hooks = loadDataHooks(new ModuleCatalogue([crm]));
  const contact = (data: Record<string, unknown>) => ({ ...input(data), module: 'crm', model: 'contacts' });

  it('lower-cases email on create and update', async () => {
    expect(await hooks.runBefore('beforeCreate', contact({ firstName: 'Ada', email: 'Ada@Example.COM' }))).toEqual({ firstName: 'Ada', email: 'ada@example.com' });
    expect(await hooks.runBefore('beforeUpdate', contact({ email: 'X@Y.Z' }))).toEqual({ email: 'x@y.z' });
    expect(await hooks.runBefore('beforeUpdate', contact({ age: 3 }))).toEqual({ age: 3 });
  });

  it('refuses an age below 0 with a validation problem naming age', async () => {
    const refused = await hooks.runBefore('beforeCreate', contact({ firstName: 'Ada', age: -1 })).catch((error: unknown) => error);
    expect(isProblem(refused) && { type: refused.type, errors: refused.extensions.errors }).toEqual({
      type: 'validation-error', errors: [expect.objectContaining({ field: 'age', code: 'OUT_OF_RANGE' })],
    });
    expect(await hooks.runBefore('beforeUpdate', contact({ age: 0 }))).toEqual({ age: 0 });
  });
});
