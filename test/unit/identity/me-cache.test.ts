import type { CommonQueryMethods } from 'slonik';
import { TenantVersionReader } from '../../../api/runtime/tenant-versions';
import { MeCache } from '../../../api/runtime/me-cache';
import type { DatabasePool } from '../../../db/pool';

interface Account {
  firstName: string;
  roles: string[];
  permissions: string[];
}

/**
 * A stand-in for the pool: answers rbac_versions_of (the version reader's query) and auth_me (the
 * cache's, with the tenant's version) from the maps below, counts the auth_me reads, and can hold
 * an auth_me answer back after taking it, as a read whose snapshot predates a change would be.
 */
function fakeDb() {
  const versions: Record<string, number> = { t1: 1, t2: 1 };
  const members: Record<string, Account> = {
    't1/u1': { firstName: 'Ada', roles: ['owner'], permissions: ['*'] },
    't1/u2': { firstName: 'Bob', roles: ['member'], permissions: [] },
    't2/u1': { firstName: 'Ada', roles: ['member'], permissions: [] },
  };
  const reads = { count: 0 };
  let hold: Promise<void> | undefined;
  const db = {
    any: async (query: { values: readonly unknown[] }) =>
      (query.values[0] as string[]).map((tenantId) => ({ tenantId, version: versions[tenantId] ?? 0 })),
    maybeOne: async (query: { values: readonly unknown[] }) => {
      const [tenantId, userId] = query.values as string[];
      reads.count += 1;
      const account = members[`${tenantId}/${userId}`];
      const row = account && {
        id: userId, email: `${userId}@example.test`, lastName: 'L', avatarUrl: null, emailVerified: true, mfaEnabled: false,
        status: 'active', createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z', deletedAt: null,
        ...account, rbacVersion: versions[tenantId],
      };
      await hold;
      return row ?? null;
    },
  };
  return {
    db: db as unknown as CommonQueryMethods & DatabasePool,
    versions, members, reads,
    /** Holds every auth_me answer taken from now on until the returned function is called. */
    holdAnswers(): () => void {
      let release!: () => void;
      hold = new Promise((resolve) => { release = resolve; });
      return () => { hold = undefined; release(); };
    },
  };
}

/** A cache over a fresh stand-in database, listening (as the gateway's once LISTEN is in effect) unless told not to. */
function setUp(options: { ttlMs?: number; maxAccounts?: number; now?: () => number; listening?: boolean } = {}) {
  const fake = fakeDb();
  const versions = new TenantVersionReader(fake.db);
  const cache = new MeCache({ db: fake.db, versions, ttlMs: options.ttlMs ?? 30_000, maxAccounts: options.maxAccounts ?? 100, now: options.now });
  if (options.listening ?? true) {
    versions.listening();
    cache.listening();
  }
  return { fake, versions, cache };
}

const nextTick = () => new Promise((resolve) => setImmediate(resolve));

describe('MeCache', () => {
  it('reads on every request while not listening, and keeps nothing', async () => {
    const { fake, cache } = setUp({ listening: false });
    await cache.answer('t1', 'u1');
    await cache.answer('t1', 'u1');
    expect(fake.reads.count).toBe(2);
  });

  it('while listening, answers again from memory, per account and tenant, in the shape of GET /auth/me', async () => {
    const { fake, cache } = setUp();
    const first = await cache.answer('t1', 'u1');
    expect(first).toMatchObject({ id: 'u1', tenantId: 't1', firstName: 'Ada', roles: ['owner'], permissions: ['*'] });
    expect(first).not.toHaveProperty('rbacVersion');
    await expect(cache.answer('t1', 'u1')).resolves.toBe(first);
    await expect(cache.answer('t2', 'u1')).resolves.toMatchObject({ tenantId: 't2', roles: ['member'] });
    expect(fake.reads.count).toBe(2);
    expect(cache.stats).toMatchObject({ hits: 1, misses: 2 });
  });

  it("reads again once the tenant's RBAC version moved past the answer's", async () => {
    const { fake, versions, cache } = setUp();
    await cache.answer('t1', 'u2');
    fake.members['t1/u2'].roles = ['admin'];
    fake.versions.t1 = 2;
    versions.notified('t1:2');
    await expect(cache.answer('t1', 'u2')).resolves.toMatchObject({ roles: ['admin'] });
    await cache.answer('t1', 'u2');
    expect(fake.reads.count).toBe(2);
  });

  it("drops an announced account's answers in every tenant, and only that account's", async () => {
    const { fake, cache } = setUp();
    await Promise.all([cache.answer('t1', 'u1'), cache.answer('t2', 'u1'), cache.answer('t1', 'u2')]);
    fake.members['t1/u1'].firstName = 'Grace';
    fake.members['t2/u1'].firstName = 'Grace';
    cache.notified('u1');
    await expect(cache.answer('t1', 'u1')).resolves.toMatchObject({ firstName: 'Grace' });
    await expect(cache.answer('t2', 'u1')).resolves.toMatchObject({ firstName: 'Grace' });
    await cache.answer('t1', 'u2');
    expect(fake.reads.count).toBe(5);
    expect(cache.stats.announcements).toBe(1);
  });

  it('reads again after forget, without waiting for the announcement', async () => {
    const { fake, cache } = setUp();
    await cache.answer('t1', 'u1');
    fake.members['t1/u1'].firstName = 'Grace';
    cache.forget('u1');
    await expect(cache.answer('t1', 'u1')).resolves.toMatchObject({ firstName: 'Grace' });
  });

  it('does not keep a read that began before its account changed', async () => {
    const { fake, cache } = setUp();
    const release = fake.holdAnswers();
    const inFlight = cache.answer('t1', 'u1');
    await nextTick();
    fake.members['t1/u1'].firstName = 'Grace';
    cache.notified('u1');
    release();
    await expect(inFlight).resolves.toMatchObject({ firstName: 'Ada' }); // answers the request that came before the change
    await expect(cache.answer('t1', 'u1')).resolves.toMatchObject({ firstName: 'Grace' }); // but is not kept for later ones
  });

  it('keeps nothing from losing the connection until listening again, and forgets what it kept before', async () => {
    const { fake, cache } = setUp();
    await cache.answer('t1', 'u1');
    cache.lost();
    fake.members['t1/u1'].firstName = 'Grace'; // announced into the gap: nobody hears it
    await expect(cache.answer('t1', 'u1')).resolves.toMatchObject({ firstName: 'Grace' });
    await cache.answer('t1', 'u1');
    expect(fake.reads.count).toBe(3);

    cache.listening();
    await cache.answer('t1', 'u1');
    await cache.answer('t1', 'u1');
    expect(fake.reads.count).toBe(4);
  });

  it('does not keep a non-member answer, and bounds reuse by the TTL and the number of accounts', async () => {
    let now = 0;
    const { fake, cache } = setUp({ ttlMs: 1000, maxAccounts: 1, now: () => now });
    await expect(cache.answer('t2', 'u2')).resolves.toBeNull();
    await cache.answer('t2', 'u2');
    expect(fake.reads.count).toBe(2);

    await cache.answer('t1', 'u1');
    now = 999;
    await cache.answer('t1', 'u1');
    expect(fake.reads.count).toBe(3);
    now = 1000;
    await cache.answer('t1', 'u1');
    expect(fake.reads.count).toBe(4);

    await cache.answer('t1', 'u2'); // a second account: the first is dropped
    await cache.answer('t1', 'u1');
    expect(fake.reads.count).toBe(6);
  });
});
