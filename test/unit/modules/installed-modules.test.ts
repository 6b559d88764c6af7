import { InstalledModules } from '../../../api/runtime/installed-modules';
import type { DatabasePool } from '../../../db/pool';

/**
 * The installed-modules cache's bookkeeping, over a stand-in pool whose answers the test releases
 * (the real query runs in the API tests): TTL, shared loads, a load overtaken by a change, and the
 * bound on tenants.
 */

const TENANT = '0190c1d2-0000-7000-8000-000000000001';
const OTHER = '0190c1d2-0000-7000-8000-000000000002';

interface PendingLoad {
  tenantId: string;
  answer(slugs: string[]): void;
}

/** A pool whose every load waits until the test answers it; the tenant is read from withTenant's set_config. */
function controlledPool() {
  const pending: PendingLoad[] = [];
  const pool = {
    async transaction<T>(work: (tx: unknown) => Promise<T>): Promise<T> {
      let tenantId = '';
      const tx = {
        query: async (query: { values: unknown[] }) => { tenantId = String(query.values[0]); },
        one: () => new Promise((resolve) => pending.push({ tenantId, answer: (slugs) => resolve({ slugs }) })),
      };
      return work(tx);
    },
  };
  return { pool: pool as unknown as DatabasePool, pending };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('InstalledModules', () => {
  it('reuses a tenant\'s set within the TTL and reloads it after', async () => {
    let now = 1_000;
    const { pool, pending } = controlledPool();
    const cache = new InstalledModules({ db: pool, ttlMs: 5_000, maxTenants: 10, now: () => now });

    const first = cache.isActive(TENANT, 'crm');
    await flush();
    pending.shift()!.answer(['crm']);
    expect(await first).toBe(true);
    expect(await cache.isActive(TENANT, 'shop')).toBe(false);
    expect(cache.stats).toEqual(expect.objectContaining({ hits: 1, misses: 1 }));

    now += 5_000;
    const expired = cache.isActive(TENANT, 'crm');
    await flush();
    expect(pending).toHaveLength(1);
    pending.shift()!.answer([]);
    expect(await expired).toBe(false);
  });

  it('shares one load between concurrent misses of a tenant', async () => {
    const { pool, pending } = controlledPool();
    const cache = new InstalledModules({ db: pool, ttlMs: 5_000, maxTenants: 10 });
    const answers = [cache.isActive(TENANT, 'crm'), cache.isActive(TENANT, 'crm'), cache.isActive(TENANT, 'shop')];
    await flush();
    expect(pending).toHaveLength(1);
    pending.shift()!.answer(['crm']);
    expect(await Promise.all(answers)).toEqual([true, true, false]);
  });

  it('does not keep a load that a change overtook', async () => {
    const { pool, pending } = controlledPool();
    const cache = new InstalledModules({ db: pool, ttlMs: 5_000, maxTenants: 10 });
    const before = cache.isActive(TENANT, 'crm');
    await flush();
    cache.invalidate(TENANT);
    pending.shift()!.answer(['crm']);
    // The request that arrived before the change gets the older answer; nothing keeps it.
    expect(await before).toBe(true);
    expect(cache.isCached(TENANT)).toBe(false);

    const after = cache.isActive(TENANT, 'crm');
    await flush();
    pending.shift()!.answer([]);
    expect(await after).toBe(false);
    expect(cache.isCached(TENANT)).toBe(true);
  });

  it('holds at most maxTenants, dropping the least recently loaded', async () => {
    const { pool, pending } = controlledPool();
    const cache = new InstalledModules({ db: pool, ttlMs: 5_000, maxTenants: 1 });
    for (const tenantId of [TENANT, OTHER]) {
      const answer = cache.isActive(tenantId, 'crm');
      await flush();
      const load = pending.shift()!;
      expect(load.tenantId).toBe(tenantId);
      load.answer(['crm']);
      await answer;
    }
    expect(cache.isCached(TENANT)).toBe(false);
    expect(cache.isCached(OTHER)).toBe(true);
  });
});
