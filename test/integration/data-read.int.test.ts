import { z } from 'zod';
import { newId } from '../../common/ids';
import { isProblem } from '../../common/problems';
import { createDbPool, sql, type DatabasePool, type DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { rowsIn } from '../../db/tenant-reads';
import { listStatement, selectRecord, type DataRecord } from '../../db/queries/data/read.queries';
import { provisionModules } from '../../services/data/provision';
import type { RawQuery } from '../../services/data/query/parse';
import { planList, planOne } from '../../services/data/query/plan';
import { selectRecords } from '../../services/data/query/select';
import { crm, dataCatalogue, dataModel } from '../helpers/data-models';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';

/**
 * The read path of the data layer (services/data/query → db/queries/data/read.queries.ts) against
 * the real PostgreSQL and the provisioned mod_crm tables, as platform_app under withTenant: filters,
 * or, order, embeds both ways, soft-deleted rows, keyset pages (also while rows are inserted),
 * tenant isolation of rows and embeds, and the indexes a typical list uses.
 */

let app: DatabasePool;
let owner: DatabasePool;
const A = newId();
const B = newId();
const ids: Record<string, string> = {};

const idRow = z.object({ id: z.string() });

async function company(tx: DatabaseTransactionConnection, tenant: string, name: string, country: string | null, deleted = false): Promise<string> {
  const { id } = await tx.one(sql.type(idRow)`
    INSERT INTO mod_crm.companies (id, tenant_id, name, country, deleted_at)
    VALUES (${newId()}, ${tenant}, ${name}, ${country}, ${deleted ? sql.fragment`now()` : null}) RETURNING id`);
  return id;
}

interface ContactSeed { firstName: string; lastName?: string | null; email?: string | null; age?: number | null; companyId?: string | null; deleted?: boolean }

async function contact(tx: DatabaseTransactionConnection, tenant: string, seed: ContactSeed): Promise<string> {
  const { id } = await tx.one(sql.type(idRow)`
    INSERT INTO mod_crm.contacts (id, tenant_id, "firstName", "lastName", email, age, "companyId", deleted_at)
    VALUES (${newId()}, ${tenant}, ${seed.firstName}, ${seed.lastName ?? null}, ${seed.email ?? null}, ${seed.age ?? null},
      ${seed.companyId ?? null}, ${seed.deleted ? sql.fragment`now()` : null}) RETURNING id`);
  return id;
}

beforeAll(async () => {
  await migrateSharedDatabase();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 1, name: 'data-read-owner' });
  // The bring-up provisions the shipped modules already; running it again changes nothing.
  await provisionModules(owner, [crm]);
  app = await createDbPool(appUrl(), { maxPoolSize: 4, name: 'data-read-test' });
  await withTenant(app, A, async (tx) => {
    ids.acme = await company(tx, A, 'Acme', 'FR');
    ids.beta = await company(tx, A, 'Beta', 'DE');
    ids.gone = await company(tx, A, 'Gone', 'IT', true);
    ids.empty = await company(tx, A, 'Empty', null);
    ids.ada = await contact(tx, A, { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@acme.io', age: 36, companyId: ids.acme });
    ids.alan = await contact(tx, A, { firstName: 'Alan', lastName: 'Turing', email: 'alan@acme.io', age: 41, companyId: ids.acme });
    ids.grace = await contact(tx, A, { firstName: 'Grace', lastName: 'Hopper', email: 'GRACE@beta.io', age: 85, companyId: ids.beta });
    ids.linus = await contact(tx, A, { firstName: 'Linus', lastName: null, email: null, age: null });
    ids.ken = await contact(tx, A, { firstName: 'Ken', lastName: 'Thompson', email: 'ken@gone.io', age: 20, companyId: ids.gone });
    ids.dead = await contact(tx, A, { firstName: 'Dead', lastName: 'Record', email: 'dead@acme.io', age: 50, companyId: ids.acme, deleted: true });
  });
  await withTenant(app, B, async (tx) => {
    ids.bcorp = await company(tx, B, 'B Corp', 'US');
    ids.bob = await contact(tx, B, { firstName: 'Bob', email: 'bob@acme.io', age: 40, companyId: ids.bcorp });
  });
});

afterAll(async () => {
  await app?.end();
  await owner?.end();
});

const contacts = dataModel('crm', 'contacts');
const companies = dataModel('crm', 'companies');

async function list(tenant: string, query: RawQuery, model = contacts) {
  const plan = planList(model, dataCatalogue, query, tenant);
  return withTenant(app, tenant, (tx) => selectRecords(rowsIn(tx), plan));
}

const names = (rows: DataRecord[], field = 'firstName') => rows.map((row) => row[field]);

describe('filters, or, order', () => {
  it.each([
    [{ age: 'gt.40' }, ['Alan', 'Grace']],
    [{ age: 'gte.36', email: 'ilike.*@ACME.io' }, ['Ada', 'Alan']],
    [{ email: 'like.*@acme.io' }, ['Ada', 'Alan']],
    [{ email: 'like.grace*' }, []],
    [{ firstName: 'in.(Ada,Linus,"Nobody, Else")' }, ['Ada', 'Linus']],
    [{ lastName: 'is.null' }, ['Linus']],
    [{ companyId: 'eq.not-a-uuid' }, null],
    [{ or: '(age.lt.21,age.gt.80)' }, ['Grace', 'Ken']],
    [{ or: '(lastName.is.null,and(age.gt.30,email.like.*@beta.io))' }, ['Grace', 'Linus']],
    [{ age: 'neq.36' }, ['Alan', 'Grace', 'Ken']],
  ])('%j', async (query, expected) => {
    if (expected === null) {
      await expect(list(A, query)).rejects.toMatchObject({ type: 'validation-error' });
      return;
    }
    const { rows } = await list(A, { ...query, order: 'firstName' });
    expect(names(rows)).toEqual(expected);
  });

  it('orders by several keys, NULLs last ascending and first descending', async () => {
    expect(names((await list(A, { order: 'age.desc,firstName' })).rows)).toEqual(['Linus', 'Grace', 'Alan', 'Ada', 'Ken']);
    expect(names((await list(A, { order: 'lastName,firstName.desc' })).rows)).toEqual(['Grace', 'Ada', 'Ken', 'Alan', 'Linus']);
  });

  it('answers records with camelCase fields and ISO timestamps; select narrows them', async () => {
    const { rows } = await list(A, { firstName: 'eq.Ada' });
    expect(rows).toEqual([{
      id: ids.ada, tenantId: A, createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      updatedAt: expect.stringMatching(/Z$/), deletedAt: null,
      firstName: 'Ada', lastName: 'Lovelace', email: 'ada@acme.io', age: 36, companyId: ids.acme, tags: null,
    }]);
    expect((await list(A, { firstName: 'eq.Ada', select: 'firstName,age' })).rows).toEqual([{ firstName: 'Ada', age: 36 }]);
  });
});

describe('embeds', () => {
  it('many-to-one: an object, null without a live company', async () => {
    const { rows } = await list(A, { select: 'firstName,companies(name,createdAt)', order: 'firstName' });
    expect(rows).toEqual([
      { firstName: 'Ada', companies: { name: 'Acme', createdAt: expect.stringMatching(/^\d{4}-.*\.\d{3}Z$/) } },
      { firstName: 'Alan', companies: { name: 'Acme', createdAt: expect.any(String) } },
      { firstName: 'Grace', companies: { name: 'Beta', createdAt: expect.any(String) } },
      { firstName: 'Ken', companies: null }, // its company is soft-deleted
      { firstName: 'Linus', companies: null },
    ]);
  });

  it('one-to-many: an array in id order, [] when none, soft-deleted contacts left out; depth 2', async () => {
    const { rows } = await list(A, { select: 'name,contacts(firstName,companies(country))', order: 'name' }, companies);
    expect(rows).toEqual([
      { name: 'Acme', contacts: [{ firstName: 'Ada', companies: { country: 'FR' } }, { firstName: 'Alan', companies: { country: 'FR' } }] },
      { name: 'Beta', contacts: [{ firstName: 'Grace', companies: { country: 'DE' } }] },
      { name: 'Empty', contacts: [] },
    ]);
  });

  it('one record by id with select, null when deleted, unknown, malformed or another tenant\'s', async () => {
    const plan = (tenant: string) => planOne(contacts, dataCatalogue, { select: 'firstName,companies(name)' }, tenant);
    expect(await withTenant(app, A, (tx) => selectRecord(rowsIn(tx), plan(A), ids.ada))).toEqual({ firstName: 'Ada', companies: { name: 'Acme' } });
    for (const id of [ids.dead, newId(), 'not-a-uuid', ids.bob]) {
      expect(await withTenant(app, A, (tx) => selectRecord(rowsIn(tx), plan(A), id))).toBeNull();
    }
  });
});

describe('soft-deleted records', () => {
  it('are left out by default; deleted_at=is.notnull (or deletedAt) returns them', async () => {
    expect(names((await list(A, {})).rows)).not.toContain('Dead');
    expect(names((await list(A, { deleted_at: 'is.notnull' })).rows)).toEqual(['Dead']);
    expect(names((await list(A, { deletedAt: 'is.notnull' })).rows)).toEqual(['Dead']);
    expect(names((await list(A, { deleted_at: 'is.notnull' }, companies)).rows, 'name')).toEqual(['Gone']);
  });
});

describe('tenant isolation', () => {
  it('a tenant sees only its rows, and embeds only its own', async () => {
    const { rows } = await list(B, { select: 'firstName,companies(name)' });
    expect(rows).toEqual([{ firstName: 'Bob', companies: { name: 'B Corp' } }]);
    expect(names((await list(B, { email: 'like.*@acme.io' })).rows)).toEqual(['Bob']);
    expect((await list(B, {}, companies)).rows.map((row) => row.name)).toEqual(['B Corp']);
  });

  it('a plan of tenant A run under tenant B\'s setting reads nothing (tenant named in SQL and by RLS)', async () => {
    const plan = planList(contacts, dataCatalogue, {}, A);
    expect((await withTenant(app, B, (tx) => selectRecords(rowsIn(tx), plan))).rows).toEqual([]);
  });
});

describe('keyset pagination', () => {
  const P = newId();

  /** Every page of the query, following next page tokens. */
  async function walk(query: RawQuery, pageSize: number, between?: () => Promise<unknown>): Promise<DataRecord[]> {
    const rows: DataRecord[] = [];
    let token: string | undefined;
    for (let pages = 0; pages < 200; pages += 1) {
      const page = await list(P, { ...query, page_size: String(pageSize), ...(token ? { page_token: token } : {}) });
      expect(page.rows.length).toBeLessThanOrEqual(pageSize);
      rows.push(...page.rows);
      token = page.nextPageToken;
      if (!token) return rows;
      await between?.();
    }
    throw new Error('pagination did not end');
  }

  beforeAll(async () => {
    // Ties and NULLs in every order key, so every branch of the keyset predicate is walked through.
    await withTenant(app, P, async (tx) => {
      for (let i = 0; i < 37; i += 1) {
        await contact(tx, P, {
          firstName: `P${i % 5}`, lastName: i % 3 === 0 ? null : `L${i % 4}`, age: i % 4 === 0 ? null : i % 6, email: `p${i}@x.io`,
        });
      }
    });
  });

  it.each([
    [{}], [{ order: 'age' }], [{ order: 'age.desc' }], [{ order: 'lastName.desc,age' }], [{ order: 'age.desc,lastName,firstName.desc' }],
    [{ order: 'createdAt.desc' }], [{ order: 'firstName,lastName.desc', age: 'gt.1' }], [{ order: 'age', or: '(age.is.null,age.lt.3)' }],
  ])('pages of 4 with %j are the single ordered list, each row once', async (query: RawQuery) => {
    const whole = (await list(P, { ...query, page_size: '100' })).rows;
    expect(whole.length).toBeGreaterThan(8);
    expect((await walk(query, 4)).map((row) => row.id)).toEqual(whole.map((row) => row.id));
  });

  it('limit/cursor pages the same way', async () => {
    const first = await list(P, { order: 'age.desc', limit: '10' });
    const second = await list(P, { order: 'age.desc', limit: '10', cursor: first.nextPageToken! });
    const whole = (await list(P, { order: 'age.desc', page_size: '20' })).rows;
    expect([...first.rows, ...second.rows].map((row) => row.id)).toEqual(whole.map((row) => row.id));
  });

  it('is stable while rows are inserted between pages: no row skipped or repeated', async () => {
    const before = (await list(P, { order: 'createdAt.desc', page_size: '100' })).rows.map((row) => row.id as string);
    let n = 0;
    const insert = () => withTenant(app, P, (tx) => contact(tx, P, { firstName: `New${n++}`, age: 1 }));
    const walked = (await walk({ order: 'createdAt.desc' }, 5, insert)).map((row) => row.id as string);
    // Newer rows sort before the position already read: none of them appears, every older row once.
    expect(walked).toEqual(before);
    const byId = (await walk({}, 5, insert)).map((row) => row.id as string);
    expect(new Set(byId).size).toBe(byId.length);
    expect(byId.filter((id) => before.includes(id)).sort()).toEqual([...before].sort());
  });

  it('a token replayed with another filter or order is a 400', async () => {
    const { nextPageToken } = await list(P, { order: 'age', page_size: '3' });
    for (const query of [{ order: 'age.desc' }, { order: 'age', age: 'gt.1' }, { order: 'age', select: 'id' }]) {
      const refused = await list(P, { ...query, page_token: nextPageToken! }).catch((error: unknown) => error);
      expect(isProblem(refused) && refused.type).toBe('validation-error');
    }
  });
});

describe('EXPLAIN of a list with three filters, an order and an embed', () => {
  const E = newId();

  interface PlanNode { 'Node Type': string; 'Relation Name'?: string; Plans?: PlanNode[] }
  const planNode: z.ZodType<PlanNode> = z.lazy(() => z.object({
    'Node Type': z.string(), 'Relation Name': z.string().optional(), Plans: z.array(planNode).optional(),
  }));

  /** Every scan of a table in the plan tree: its node type and table. */
  function scansOf(node: PlanNode): { node: string; relation: string }[] {
    const own = node['Relation Name'] ? [{ node: node['Node Type'], relation: node['Relation Name'] }] : [];
    return [...own, ...(node.Plans ?? []).flatMap(scansOf)];
  }

  beforeAll(async () => {
    // Enough rows (and statistics) that the planner has a choice: 50 other tenants of 20 companies
    // and 200 contacts. Row-level security holds for the owner role too, so each tenant's rows go in under its setting.
    for (let t = 0; t < 50; t += 1) {
      const tenant = newId();
      await withTenant(app, tenant, (tx) => tx.query(sql.unsafe`
        WITH c AS (
          INSERT INTO mod_crm.companies (id, tenant_id, name) SELECT gen_random_uuid(), ${tenant}, 'Co ' || n FROM generate_series(1, 20) n
          RETURNING id, tenant_id
        )
        INSERT INTO mod_crm.contacts (id, tenant_id, "firstName", email, age, "companyId")
        SELECT gen_random_uuid(), c.tenant_id, 'F' || g, 'f' || g || '@acme.io', g % 90, c.id FROM c, generate_series(1, 10) g`));
    }
    await withTenant(app, E, async (tx) => {
      const acme = await company(tx, E, 'Acme', 'FR');
      for (let i = 0; i < 30; i += 1) await contact(tx, E, { firstName: `E${i}`, email: `e${i}@acme.io`, age: 20 + i, companyId: acme });
    });
    await owner.query(sql.unsafe`ANALYZE mod_crm.contacts`);
    await owner.query(sql.unsafe`ANALYZE mod_crm.companies`);
  });

  it('reads contacts and the embedded companies through their indexes', async () => {
    const plan = planList(contacts, dataCatalogue, {
      age: 'gt.25', email: 'like.*@acme.io', lastName: 'is.null', order: 'createdAt.desc', select: 'firstName,age,companies(name)',
    }, E);
    const explained = await withTenant(app, E, (tx) => tx.one(sql.type(z.object({ 'QUERY PLAN': z.array(z.object({ Plan: planNode })) }))`
      EXPLAIN (FORMAT JSON) ${listStatement(plan)}`));
    const scans = scansOf(explained['QUERY PLAN'][0].Plan);
    // A bitmap heap scan names the table, its Bitmap Index Scan child the index.
    const byIndex = new Set(['Index Scan', 'Index Only Scan', 'Bitmap Heap Scan']);
    expect(scans.map(({ node, relation }) => `${relation}: ${byIndex.has(node) ? 'index' : node}`).sort())
      .toEqual(['companies: index', 'contacts: index']);
  });
});
