import { z } from 'zod';
import { newId } from '../../common/ids';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { isStatementTimeout } from '../../db/queries/data/read.queries';
import { TenantReader } from '../../db/tenant-reads';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';

/**
 * The one-round-trip tenant reads (db/tenant-reads.ts) as platform_app on the real PostgreSQL: row
 * level security sees the tenant, the settings end with each read, a failed read leaves its
 * connection clean, and rows come back in the shapes slonik gives. One connection, so every read
 * runs on the session the one before it used: a setting or an aborted transaction left behind would show.
 */

const tenantA = newId();
const tenantB = newId();

let owner: DatabasePool;
let app: DatabasePool;
let reader: TenantReader;

beforeAll(async () => {
  await migrateSharedDatabase();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 1, name: 'tenant-reads-owner' });
  app = await createDbPool(appUrl(), { maxPoolSize: 1, name: 'tenant-reads-app' });
  reader = await TenantReader.open(appUrl(), app, 1);
  for (const tenantId of [tenantA, tenantA, tenantB]) {
    await owner.query(sql.unsafe`
      INSERT INTO idempotency_keys (tenant_id, scope, key, request_hash, expires_at)
      VALUES (${tenantId}, 'tenant-reads-test', ${newId()}, 'hash', now() + interval '1 hour')`);
  }
});

afterAll(async () => {
  await owner?.query(sql.unsafe`DELETE FROM idempotency_keys WHERE scope = 'tenant-reads-test'`);
  await Promise.all([reader?.end(), app?.end(), owner?.end()]);
});

const keysOfBoth = sql.type(z.object({ tenantId: z.string() }))`
  SELECT tenant_id AS "tenantId" FROM idempotency_keys WHERE scope = 'tenant-reads-test' AND tenant_id = ANY(${sql.array([tenantA, tenantB], 'uuid')})`;

const settings = sql.type(z.object({ tenant: z.string().nullable(), timeout: z.string(), sort: z.string() }))`
  SELECT current_setting('app.tenant_id', true) AS tenant, current_setting('statement_timeout') AS timeout,
         current_setting('enable_sort') AS sort`;

it('row-level security sees the tenant of the read, whatever the statement asks for', async () => {
  expect((await reader.rows(tenantA, keysOfBoth)).map((row) => row.tenantId)).toEqual([tenantA, tenantA]);
  expect((await reader.rows(tenantB, keysOfBoth)).map((row) => row.tenantId)).toEqual([tenantB]);
});

it('the settings hold for the read and end with it', async () => {
  const [during] = await reader.rows(tenantA, settings, { statementTimeoutMs: 1234, discourageSorts: true });
  expect(during).toMatchObject({ tenant: tenantA, timeout: '1234ms', sort: 'off' });
  const [after] = await reader.rows(tenantB, settings);
  expect(after).toMatchObject({ tenant: tenantB, sort: 'on' });
  expect(after.timeout).not.toBe('1234ms');
});

it('a read past its statement_timeout fails as a timeout and the next read on the connection works', async () => {
  const slow = sql.unsafe`SELECT pg_sleep(2)`;
  const failure = await reader.rows(tenantA, slow, { statementTimeoutMs: 50 }).catch((error: unknown) => error);
  expect(isStatementTimeout(failure)).toBe(true);
  // The aborted transaction was rolled back by its own COMMIT: no "current transaction is aborted".
  const [after] = await reader.rows(tenantB, settings);
  expect(after.tenant).toBe(tenantB);
});

it('a failing statement rejects with its error and leaves the connection clean', async () => {
  await expect(reader.rows(tenantA, sql.unsafe`SELECT 1 / 0`)).rejects.toMatchObject({ code: '22012' });
  await expect(reader.rows(tenantA, sql.unsafe`SELECT 'x'::uuid`)).rejects.toMatchObject({ code: '22P02' });
  expect((await reader.rows(tenantA, keysOfBoth))).toHaveLength(2);
});

it('rows come back in slonik\'s shapes: int8 as a number, timestamps as ISO 8601, arrays of them too, validated by the row schema', async () => {
  const shapes = sql.type(z.object({ big: z.number(), at: z.string(), ats: z.array(z.string()), data: z.object({ a: z.number() }) }))`
    SELECT 9007199254740991::int8 AS big, '2024-05-01 10:00:00.5+02'::timestamptz AS at,
           ARRAY['0013-10-06 00:00:00+00'::timestamptz] AS ats, '{"a": 1}'::jsonb AS data`;
  expect(await reader.rows(tenantA, shapes)).toEqual([{
    big: 9_007_199_254_740_991, at: '2024-05-01T08:00:00.500Z', ats: ['0013-10-06T00:00:00.000Z'], data: { a: 1 },
  }]);
  const mistyped = sql.type(z.object({ big: z.string() }))`SELECT 1::int8 AS big`;
  await expect(reader.rows(tenantA, mistyped)).rejects.toThrow(/schema/);
});

it('refuses a tenant that is not an id', async () => {
  await expect(reader.rows('tenant-a\' OR true', keysOfBoth)).rejects.toThrow(/verified token/);
});

it('prepares each settings statement once per connection, and a failed read leaves it prepared', async () => {
  const prepared = sql.type(z.object({ name: z.string() }))`
    SELECT name FROM pg_prepared_statements WHERE name LIKE 'tenant-settings-%' ORDER BY name`;
  await reader.rows(tenantA, keysOfBoth, { statementTimeoutMs: 1000 });
  await expect(reader.rows(tenantA, sql.unsafe`SELECT 1 / 0`, { discourageSorts: true })).rejects.toMatchObject({ code: '22012' });
  const names = (await reader.rows(tenantA, prepared)).map((row) => row.name);
  // One per combination of options used on this connection (so far by this file's reads), none twice.
  expect(names.length).toBeGreaterThanOrEqual(3);
  expect(new Set(names).size).toBe(names.length);
  expect(await reader.rows(tenantB, keysOfBoth, { discourageSorts: true })).toEqual([{ tenantId: tenantB }]);
  expect((await reader.rows(tenantA, prepared)).map((row) => row.name)).toEqual(names);
});

it('a named statement that fails to parse on a fresh connection parses again once it can', async () => {
  const fresh = await TenantReader.open(appUrl(), app, 1);
  const table = `tenant_reads_late_${newId().replaceAll('-', '')}`;
  const late = { ...sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM ${sql.identifier([table])}`, name: `late_${table}` };
  try {
    await expect(fresh.rows(tenantA, late)).rejects.toMatchObject({ code: '42P01' });
    await owner.query(sql.unsafe`CREATE TABLE ${sql.identifier([table])} (id int)`);
    await owner.query(sql.unsafe`GRANT SELECT ON ${sql.identifier([table])} TO platform_app`);
    expect(await fresh.rows(tenantA, late)).toEqual([{ n: 0 }]);
  } finally {
    await owner.query(sql.unsafe`DROP TABLE IF EXISTS ${sql.identifier([table])}`);
    await fresh.end();
  }
});

it('reads of several tenants written in one turn each see their own tenant, and a failing one fails alone', async () => {
  const [ofA, failed, ofB] = await Promise.allSettled([
    reader.rows(tenantA, keysOfBoth), reader.rows(tenantB, sql.unsafe`SELECT 1 / 0`), reader.rows(tenantB, keysOfBoth),
  ]);
  expect(ofA).toEqual({ status: 'fulfilled', value: [{ tenantId: tenantA }, { tenantId: tenantA }] });
  expect(failed).toMatchObject({ status: 'rejected', reason: { code: '22012' } });
  expect(ofB).toEqual({ status: 'fulfilled', value: [{ tenantId: tenantB }] });
});

it('writes the reads of one turn on one connection, where its pool has more, and the next turn may use another', async () => {
  // Without the turn's write each read would take a connection of its own from the pool of four.
  const wide = await TenantReader.open(appUrl(), app, 4);
  try {
    const backendOf = sql.type(z.object({ pid: z.number() }))`SELECT pg_backend_pid() AS pid`;
    const pidsOf = async (reads: Array<Promise<readonly Record<string, unknown>[]>>) => new Set((await Promise.all(reads)).map(([row]) => row.pid));
    expect((await pidsOf([tenantA, tenantB, tenantA, tenantB].map((tenantId) => wide.rows(tenantId, backendOf)))).size).toBe(1);
    // Two turns, the first's reads still running when the second writes: each turn its own write, so
    // the pool opens a second connection for the second (a turn whose write has been answered would
    // have handed its connection back for the next).
    const slowBackendOf = sql.type(z.object({ pid: z.number() }))`SELECT pg_backend_pid() AS pid FROM pg_sleep(0.2)`;
    const first = [tenantA, tenantB].map((tenantId) => wide.rows(tenantId, slowBackendOf));
    await new Promise((resolve) => setImmediate(resolve));
    const second = [tenantA, tenantB].map((tenantId) => wide.rows(tenantId, backendOf));
    const [ofFirst, ofSecond] = await Promise.all([pidsOf(first), pidsOf(second)]);
    expect([ofFirst.size, ofSecond.size]).toEqual([1, 1]);
    expect([...ofFirst][0]).not.toBe([...ofSecond][0]);
  } finally {
    await wide.end();
  }
});

describe('together', () => {
  const backend = sql.type(z.object({ pid: z.number(), n: z.number() }))`SELECT pg_backend_pid() AS pid, 1 AS n`;

  it('writes the statements of one turn together, each its own transaction answered with its own rows', async () => {
    const numbered = (n: number) => sql.type(z.object({ n: z.number() }))`SELECT ${n}::int AS n`;
    const answers = await Promise.all([reader.together(numbered(1)), reader.together(numbered(2)), reader.together(backend), reader.together(backend)]);
    expect(answers.slice(0, 2)).toEqual([[{ n: 1 }], [{ n: 2 }]]);
    const [[third], [fourth]] = answers.slice(2) as Array<Array<{ pid: number }>>;
    expect(third.pid).toBe(fourth.pid);
    // No transaction is left open, and no tenant setting is made for them.
    const [after] = await reader.together(settings);
    expect(after.tenant === null || after.tenant === '').toBe(true);
  });

  it('rejects a failing statement alone: the others of its turn are answered and the connection stays usable', async () => {
    const [before, failed, after] = await Promise.allSettled([
      reader.together(backend), reader.together(sql.unsafe`SELECT 1 / 0`), reader.together(backend),
    ]);
    expect(before.status).toBe('fulfilled');
    expect(failed).toMatchObject({ status: 'rejected', reason: { code: '22012' } });
    expect(after.status).toBe('fulfilled');
    expect(await reader.together(backend)).toHaveLength(1);
  });
});
