import type { CommonQueryMethods } from 'slonik';
import { TenantVersionReader } from '../../../api/access/tenant-versions';

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
});
