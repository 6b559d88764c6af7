import { FeatureFlagCache } from '../../../api/runtime/flag-cache';
import { createLogger } from '../../../common/logger';
import type { DatabasePool } from '../../../db/pool';

/**
 * A stand-in for the pool that answers listGlobalFlags from `flags` as they are when the read is
 * taken, and can hold reads back after taking them, as a read whose snapshot predates a change.
 */
function fakeDb() {
  const flags: Record<string, boolean> = { 'billing.enforcement': true };
  const reads = { count: 0 };
  let hold: Promise<void> | undefined;
  const db = {
    any: async () => {
      reads.count += 1;
      const rows = Object.entries(flags).map(([key, enabled]) => ({ key, enabled }));
      await hold;
      return rows;
    },
  };
  return {
    db: db as unknown as DatabasePool,
    flags, reads,
    holdReads(): () => void {
      let release!: () => void;
      hold = new Promise((resolve) => { release = resolve; });
      return () => { hold = undefined; release(); };
    },
  };
}

/** A cache whose interval never fires during a test: only announcements and listening reload it. */
async function loaded() {
  const fake = fakeDb();
  const cache = new FeatureFlagCache(fake.db, createLogger('flag-cache-test', 'silent'), 3_600_000);
  cache.start();
  await cache.refresh();
  return { fake, cache };
}

/** Lets the promise chains of the loads triggered so far run to their end. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('FeatureFlagCache reloads on announcements (migration 0035)', () => {
  let cache: FeatureFlagCache;
  afterEach(() => cache?.stop());

  it('reloads when a change is announced', async () => {
    const setup = await loaded();
    cache = setup.cache;
    expect(cache.isEnabled('billing.enforcement')).toBe(true);
    setup.fake.flags['billing.enforcement'] = false;
    cache.notified();
    await settle();
    expect(cache.isEnabled('billing.enforcement', true)).toBe(false);
    expect(cache.stats.announcements).toBe(1);
  });

  it('reloads once when listening begins (announcements of the gap were lost) and keeps its flags when the connection is lost', async () => {
    const setup = await loaded();
    cache = setup.cache;
    cache.lost();
    setup.fake.flags['billing.enforcement'] = false;
    expect(cache.isEnabled('billing.enforcement')).toBe(true);
    const reads = setup.fake.reads.count;
    cache.listening();
    await settle();
    expect(setup.fake.reads.count).toBe(reads + 1);
    expect(cache.isEnabled('billing.enforcement', true)).toBe(false);
  });

  it('reads again after a running load when a change is announced meanwhile; further announcements share that read', async () => {
    const setup = await loaded();
    cache = setup.cache;
    const release = setup.fake.holdReads();
    const running = cache.refresh();
    await settle();
    // The running load took its snapshot before this change.
    setup.fake.flags['billing.enforcement'] = false;
    const reads = setup.fake.reads.count;
    cache.notified();
    cache.notified();
    cache.notified();
    release();
    await running;
    await settle();
    expect(setup.fake.reads.count).toBe(reads + 1);
    expect(cache.isEnabled('billing.enforcement', true)).toBe(false);
  });

  it('answers the fallback for a flag it does not hold', async () => {
    const setup = await loaded();
    cache = setup.cache;
    expect(cache.isEnabled('no.such.flag', true)).toBe(true);
    expect(cache.isEnabled('no.such.flag')).toBe(false);
  });

  it('ignores announcements once stopped', async () => {
    const setup = await loaded();
    cache = setup.cache;
    cache.stop();
    const reads = setup.fake.reads.count;
    cache.notified();
    cache.listening();
    await settle();
    expect(setup.fake.reads.count).toBe(reads);
  });
});
