import { PostgrestClient } from '@supabase/postgrest-js';
import { crmTenant, startDataApiStack, UUID_V7, type DataApiStack, type DataRecord } from '../../helpers/data-api';
import { call } from '../../helpers/http';
import { send } from '../../helpers/rbac';

/**
 * `@supabase/postgrest-js`, the client many engineers know, against `/v1/data/crm` through the real
 * gateway (issue 35): the queries it builds as it builds them, and what it reads back, `count` from
 * `Content-Range` included. The data API's differences by design (docs/decisions/data.md, PostgREST
 * clients) are asserted as the answers a client gets: lists answer the page envelope (`data` is
 * `{data, …}`, not a bare array), offsets past 0 and writes addressed by a filter are refused.
 * crm contacts {firstName, lastName, email, age, companyId → companies, tags}.
 */

let stack: DataApiStack;
let client: PostgrestClient;
let baseUrl: string;
let token: string;
let ids: Record<string, string>;

/** A list's answer as the client hands it over: `data` is the page envelope. */
interface Envelope { data: DataRecord[]; next_page_token?: string; meta?: { cursor: string | null; hasMore: boolean }; count?: number }

interface Result { data: unknown; error: unknown; count: number | null; status: number }

/** The page envelope of a list answer, after checking it is a 200 without error. */
function envelopeOf(result: Result): Envelope {
  expect({ status: result.status, error: result.error }).toEqual({ status: 200, error: null });
  return result.data as Envelope;
}

const rows = (result: Result) => envelopeOf(result).data;

/** A create's answer: the record (postgrest-js types an insert without select() as no data). */
const recordOf = (result: Result) => result.data as DataRecord;

const firstNames = (result: Result) => rows(result).map((record) => record.firstName);

/** The RFC 9457 problem of a refused request: postgrest-js hands the JSON body over as its `error`. */
const problemOf = (result: Result) => result.error as { type?: string; errors?: { field: string }[] };

function expectProblem(result: Result, status: number, type: string): void {
  expect({ status: result.status, type: problemOf(result).type }).toEqual({ status, type: stack.gateway.problemType(type) });
}

beforeAll(async () => {
  stack = await startDataApiStack('data-postgrest-js-test');
  const tenant = await crmTenant(stack);
  token = tenant.token;
  baseUrl = `${stack.gateway.baseUrl}/v1/data/crm`;
  client = new PostgrestClient(baseUrl, { headers: { Authorization: `Bearer ${token}` } });
  const create = async (model: string, body: Record<string, unknown>) => {
    const answer = await send<DataRecord>(stack.gateway, 'POST', `/data/crm/${model}`, token, body);
    expect(answer.status).toBe(201);
    return answer.body.id;
  };
  const acme = await create('companies', { name: 'Acme' });
  const globex = await create('companies', { name: 'Globex' });
  ids = { acme, globex };
  // Created in name order: without `order`, records come in creation (id) order.
  for (const contact of [
    { firstName: 'Ada', age: 20, email: 'ada@x.io', companyId: acme }, { firstName: 'Alan', age: 40, companyId: acme },
    { firstName: 'Bea', age: 60, email: 'bea@x.io', companyId: globex }, { firstName: 'Cy', age: 80 }, { firstName: 'Dot' },
  ]) {
    ids[contact.firstName] = await create('contacts', contact);
  }
});

afterAll(async () => {
  await stack?.close();
});

describe('postgrest-js reads', () => {
  it('select with columns', async () => {
    expect(rows(await client.from('contacts').select('firstName, age'))).toEqual([
      { firstName: 'Ada', age: 20 }, { firstName: 'Alan', age: 40 }, { firstName: 'Bea', age: 60 }, { firstName: 'Cy', age: 80 }, { firstName: 'Dot', age: null },
    ]);
  });

  it.each([
    ['eq', (q: Query) => q.eq('firstName', 'Ada'), ['Ada']],
    ['neq', (q: Query) => q.neq('firstName', 'Ada'), ['Alan', 'Bea', 'Cy', 'Dot']],
    ['gt', (q: Query) => q.gt('age', 40), ['Bea', 'Cy']],
    ['gte', (q: Query) => q.gte('age', 40), ['Alan', 'Bea', 'Cy']],
    ['lt', (q: Query) => q.lt('age', 40), ['Ada']],
    ['lte', (q: Query) => q.lte('age', 40), ['Ada', 'Alan']],
    ['in', (q: Query) => q.in('firstName', ['Ada', 'Cy', 'Nobody']), ['Ada', 'Cy']],
    ['is null', (q: Query) => q.is('age', null), ['Dot']],
    ['like with %', (q: Query) => q.like('email', '%@x.io'), ['Ada', 'Bea']],
    ['ilike with %', (q: Query) => q.ilike('firstName', 'a%'), ['Ada', 'Alan']],
    ['like with *', (q: Query) => q.like('firstName', 'A*n'), ['Alan']],
    ['ilike with *', (q: Query) => q.ilike('email', '*X.IO'), ['Ada', 'Bea']],
    ['filters ANDed', (q: Query) => q.gte('age', 20).like('email', '%x.io'), ['Ada', 'Bea']],
  ])('%s', async (_operator, filtered: (query: Query) => Query, expected) => {
    expect(firstNames(await filtered(client.from('contacts').select('firstName')))).toEqual(expected);
  });

  it('order ascending and descending (NULLs first descending, as PostgreSQL orders)', async () => {
    expect(firstNames(await client.from('contacts').select('firstName').order('firstName', { ascending: false }))).toEqual(['Dot', 'Cy', 'Bea', 'Alan', 'Ada']);
    expect(firstNames(await client.from('contacts').select('firstName').order('age'))).toEqual(['Ada', 'Alan', 'Bea', 'Cy', 'Dot']);
    expect(firstNames(await client.from('contacts').select('firstName').order('age', { ascending: false }))).toEqual(['Dot', 'Cy', 'Bea', 'Alan', 'Ada']);
  });

  it('limit: the first rows, in the limit/cursor envelope', async () => {
    const result = await client.from('contacts').select('firstName').order('age').limit(2);
    expect(firstNames(result)).toEqual(['Ada', 'Alan']);
    expect(envelopeOf(result).meta).toEqual({ cursor: expect.any(String), hasMore: true });
  });

  it('range(0, n): the first n + 1 rows (offset=0 is the first page)', async () => {
    expect(firstNames(await client.from('contacts').select('firstName').range(0, 2))).toEqual(['Ada', 'Alan', 'Bea']);
  });

  it('range from another offset: 400 naming offset (keyset pages; by design)', async () => {
    const result = await client.from('contacts').select('firstName').range(2, 3);
    expectProblem(result, 400, 'validation-error');
    expect(problemOf(result).errors?.map((error) => error.field)).toEqual(['offset']);
  });

  it('count: exact, from Content-Range, on a page of the rows', async () => {
    const result = await client.from('contacts').select('firstName', { count: 'exact' }).gte('age', 40).limit(2);
    expect(firstNames(result)).toEqual(['Alan', 'Bea']);
    expect(result.count).toBe(3);
  });

  it('count: exact with head: true (HEAD, no body)', async () => {
    const result = await client.from('contacts').select('*', { count: 'exact', head: true }).is('email', null);
    expect({ status: result.status, error: result.error, data: result.data, count: result.count }).toEqual({ status: 200, error: null, data: null, count: 3 });
  });

  it('a relation embedded in select', async () => {
    expect(rows(await client.from('contacts').select('firstName, companies(name)').lte('age', 60))).toEqual([
      { firstName: 'Ada', companies: { name: 'Acme' } }, { firstName: 'Alan', companies: { name: 'Acme' } }, { firstName: 'Bea', companies: { name: 'Globex' } },
    ]);
    const [acme] = rows(await client.from('companies').select('name, contacts(firstName)').eq('name', 'Acme'));
    expect(acme).toEqual({ name: 'Acme', contacts: [{ firstName: 'Ada' }, { firstName: 'Alan' }] });
  });

  it('single() and maybeSingle() on one record\'s path: the record itself', async () => {
    const single = await client.from(`contacts/${ids.Bea}`).select('firstName, age').single();
    expect({ status: single.status, data: single.data }).toEqual({ status: 200, data: { firstName: 'Bea', age: 60 } });
    const maybe = await client.from(`contacts/${ids.Cy}`).select('firstName').maybeSingle();
    expect({ status: maybe.status, data: maybe.data }).toEqual({ status: 200, data: { firstName: 'Cy' } });
  });

  it('single() and maybeSingle() on a list: the page envelope, as every list answers (by design)', async () => {
    const single = await client.from('contacts').select('firstName').eq('firstName', 'Ada').single();
    expect(firstNames(single)).toEqual(['Ada']);
    const none = await client.from('contacts').select('firstName').eq('firstName', 'Nobody').maybeSingle();
    expect(firstNames(none)).toEqual([]);
  });
});

describe('postgrest-js writes', () => {
  it('insert: 201 with the record', async () => {
    const result = await client.from('contacts').insert({ firstName: 'Eve', age: 30, companyId: ids.globex });
    expect({ status: result.status, error: result.error }).toEqual({ status: 201, error: null });
    expect(result.data).toMatchObject({ id: expect.stringMatching(UUID_V7), firstName: 'Eve', age: 30, companyId: ids.globex });
    expect(firstNames(await client.from('contacts').select('firstName').eq('age', 30))).toEqual(['Eve']);
  });

  it('update and delete addressed by a filter: 405, the five record routes name one record by its path (by design)', async () => {
    expectProblem(await client.from('contacts').update({ age: 21 }).eq('id', ids.Ada), 405, 'method-not-allowed');
    expectProblem(await client.from('contacts').delete().eq('id', ids.Ada), 405, 'method-not-allowed');
    expect(rows(await client.from('contacts').select('age').eq('firstName', 'Ada'))).toEqual([{ age: 20 }]);
  });

  it('update and delete of one record by its path', async () => {
    const { id } = recordOf(await client.from('contacts').insert({ firstName: 'Fay', age: 50 }));
    const updated = await client.from(`contacts/${id}`).update({ age: 51 });
    expect({ status: updated.status, error: updated.error, data: updated.data }).toMatchObject({ status: 200, error: null, data: { id, firstName: 'Fay', age: 51 } });
    const deleted = await client.from(`contacts/${id}`).delete();
    expect({ status: deleted.status, error: deleted.error, data: deleted.data }).toEqual({ status: 204, error: null, data: null });
    expect(rows(await client.from('contacts').select('firstName').eq('firstName', 'Fay'))).toEqual([]);
  });
});

describe('Content-Range on every page', () => {
  async function page(query: Record<string, string>, prefer?: string) {
    const answer = await call<Envelope>(`${baseUrl}/companies?${new URLSearchParams(query).toString()}`, {
      headers: { authorization: `Bearer ${token}`, ...(prefer ? { prefer } : {}) },
    });
    expect(answer.status).toBe(200);
    return { range: answer.headers.get('content-range'), body: answer.body };
  }

  it('first-last of the whole list on each keyset page, with the total when counted', async () => {
    const more = await send<DataRecord>(stack.gateway, 'POST', '/data/crm/companies', token, { name: 'Initech' });
    expect(more.status).toBe(201);
    const first = await page({ page_size: '2' }, 'count=exact');
    expect({ range: first.range, count: first.body.count }).toEqual({ range: '0-1/3', count: 3 });
    const second = await page({ page_size: '2', page_token: first.body.next_page_token! }, 'count=exact');
    expect({ range: second.range, names: second.body.data.map((company) => company.name) }).toEqual({ range: '2-2/3', names: ['Initech'] });
    // The page size may change between pages: the offset is the rows that came before.
    const byOne = await page({ page_size: '1' });
    const after = await page({ page_size: '2', page_token: byOne.body.next_page_token! });
    expect([byOne.range, after.range]).toEqual(['0-0/*', '1-2/*']);
    const cursor = await page({ limit: '2' });
    expect((await page({ limit: '2', cursor: cursor.body.meta!.cursor! })).range).toBe('2-2/*');
  });

  it('an empty page: */0 with the count, */* without', async () => {
    expect((await page({ name: 'eq.Nobody' }, 'count=exact')).range).toBe('*/0');
    expect((await page({ name: 'eq.Nobody' })).range).toBe('*/*');
  });
});

type Query = ReturnType<ReturnType<PostgrestClient['from']>['select']>;
