import type { CommonQueryMethods } from 'slonik';
import { TenantVersionReader } from '../../../api/runtime/tenant-versions';

/** A stand-in for the pool: answers rbac_versions_of from a map and records each query's tenants. */
function fakeDb(versions: Record<string, number>) {
  const queries: string[][] = [];
  const db = {
    any: async (query: { values: readonly unknown[] }) => {
      const tenantIds = query.values[0] as string[];
      queries.push([...tenantIds]);
      return tenantIds.map((tenantId) => ({ tenantId, version: versions[tenantId] ?? 0 }));
    },
  } as unknown as CommonQueryMethods;
  return { db, queries };
}

describe('TenantVersionReader', () => {
  it('answers the reads of one tick with one query, and later reads with a new one', async () => {
    const { db, queries } = fakeDb({ a: 3, b: 7 });
    const reader = new TenantVersionReader(db);
    await expect(Promise.all([reader.read('a'), reader.read('b'), reader.read('a'), reader.read('c')])).resolves.toEqual([3, 7, 3, 0]);
    expect(queries).toEqual([['a', 'b', 'c']]);
    await expect(reader.read('a')).resolves.toBe(3);
    expect(queries).toHaveLength(2);
  });

  it('fails every read of a batch whose query failed', async () => {
    const db = { any: async () => { throw new Error('database down'); } } as unknown as CommonQueryMethods;
    const reader = new TenantVersionReader(db);
    const reads = [reader.read('a'), reader.read('b')];
    for (const read of reads) await expect(read).rejects.toThrow('database down');
  });

  it('while listening, keeps what it read and heard: no query per request, announcements move a version forward only', async () => {
    const versions = { a: 3 };
    const { db, queries } = fakeDb(versions);
    const reader = new TenantVersionReader(db);
    reader.listening();
    await expect(reader.read('a')).resolves.toBe(3);
    await expect(reader.read('a')).resolves.toBe(3);
    expect(queries).toHaveLength(1);

    versions.a = 5;
    reader.notified('a:5');
    reader.notified('a:4'); // an older announcement delivered late changes nothing
    reader.notified('b:2'); // a tenant not read yet is known from its announcement
    await expect(Promise.all([reader.read('a'), reader.read('b')])).resolves.toEqual([5, 2]);
    expect(queries).toHaveLength(1);
  });

  it('reads per request while not listening, and drops what it knew when the connection is lost and when it listens again', async () => {
    const versions = { a: 1 };
    const { db, queries } = fakeDb(versions);
    const reader = new TenantVersionReader(db);
    await reader.read('a');
    await reader.read('a');
    expect(queries).toHaveLength(2); // not listening yet: nothing is kept

    reader.listening();
    await reader.read('a');
    reader.lost();
    // In the gap announcements are lost; a change then must still show on the next request.
    versions.a = 2;
    reader.notified('a:2');
    expect(reader.knownVersion('a')).toBeUndefined();
    await expect(reader.read('a')).resolves.toBe(2);
    await expect(reader.read('a')).resolves.toBe(2);
    expect(queries).toHaveLength(5);

    reader.listening();
    versions.a = 3; // changed before LISTEN took effect: nothing announces it
    await expect(reader.read('a')).resolves.toBe(3);
    expect(reader.knownVersion('a')).toBe(3);
  });

  it('does not keep a read that began before the tenant changed through this process or before listening resumed', async () => {
    const versions = { a: 1 };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const db = {
      any: async (query: { values: readonly unknown[] }) => {
        const tenantIds = query.values[0] as string[];
        const answer = tenantIds.map((tenantId) => ({ tenantId, version: versions[tenantId as 'a'] }));
        await gate; // the answer is taken before the change below commits, and arrives after it
        return answer;
      },
    } as unknown as CommonQueryMethods;
    const reader = new TenantVersionReader(db);
    reader.listening();
    const inFlight = reader.read('a');
    await new Promise((resolve) => setImmediate(resolve));
    versions.a = 2;
    reader.forget('a');
    release();
    await expect(inFlight).resolves.toBe(1); // answers the request that came before the change
    expect(reader.knownVersion('a')).toBeUndefined(); // but is not kept for the ones after it
  });
});
