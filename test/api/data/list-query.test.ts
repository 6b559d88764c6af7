import { crmTenant, startDataApiStack, type DataApiStack, type DataRecord } from '../../helpers/data-api';
import { call } from '../../helpers/http';
import { send } from '../../helpers/rbac';

/**
 * The list's `not.` filters and `Prefer: count=exact` (issue 16) through the gateway and PostgreSQL,
 * on crm contacts {firstName, lastName, email, age, companyId, tags}.
 */

let stack: DataApiStack;

beforeAll(async () => {
  stack = await startDataApiStack('data-list-query-test');
});

afterAll(async () => {
  await stack?.close();
});

interface Page { data: DataRecord[]; next_page_token?: string; meta?: { cursor: string | null; hasMore: boolean }; count?: number }

/** A tenant with crm installed and five contacts: ages 20, 40, 60, 80 and none; e-mails on two. */
async function tenantWithContacts(): Promise<string> {
  const { token } = await crmTenant(stack);
  for (const contact of [
    { firstName: 'Ada', age: 20, email: 'ada@x.io' }, { firstName: 'Alan', age: 40 }, { firstName: 'Bea', age: 60, email: 'bea@x.io' },
    { firstName: 'Cy', age: 80 }, { firstName: 'Dot' },
  ]) {
    expect((await send(stack.gateway, 'POST', '/data/crm/contacts', token, contact)).status).toBe(201);
  }
  return token;
}

function list(token: string, query: Record<string, string>, headers: Record<string, string> = {}) {
  return call<Page>(`${stack.gateway.baseUrl}/v1/data/crm/contacts?${new URLSearchParams(query).toString()}`, {
    headers: { authorization: `Bearer ${token}`, ...headers },
  });
}

const names = (page: Page) => page.data.map((record) => record.firstName).sort();

describe('not. negates every operator', () => {
  let token: string;
  beforeAll(async () => {
    token = await tenantWithContacts();
  });

  it.each([
    [{ age: 'not.gt.40' }, ['Ada', 'Alan']],
    [{ firstName: 'not.like.A*' }, ['Bea', 'Cy', 'Dot']],
    [{ firstName: 'not.ilike.a*' }, ['Bea', 'Cy', 'Dot']],
    [{ age: 'not.in.(20,60)' }, ['Alan', 'Cy']],
    [{ email: 'not.is.null' }, ['Ada', 'Bea']],
    [{ age: 'not.is.notnull' }, ['Dot']],
    [{ firstName: 'not.eq.Ada', age: 'not.eq.80' }, ['Alan', 'Bea']],
    [{ or: '(age.not.lt.80,email.not.is.null)' }, ['Ada', 'Bea', 'Cy']],
  ])('%j → %j (a null field matches neither a condition nor its not.)', async (query, expected) => {
    const answer = await list(token, { ...query, select: 'firstName' });
    expect(answer.status).toBe(200);
    expect(names(answer.body)).toEqual(expected);
  });
});

describe('Prefer: count=exact', () => {
  let token: string;
  beforeAll(async () => {
    token = await tenantWithContacts();
  });

  it('adds count, every record the filters match, on every page, and says it applied', async () => {
    const first = await list(token, { age: 'gte.40', page_size: '2' }, { prefer: 'count=exact' });
    expect(first.status).toBe(200);
    expect(first.headers.get('preference-applied')).toBe('count=exact');
    expect(first.body).toEqual({ data: [expect.anything(), expect.anything()], next_page_token: expect.any(String), count: 3 });
    const second = await list(token, { age: 'gte.40', page_size: '2', page_token: first.body.next_page_token! }, { prefer: 'return=minimal, count=exact' });
    expect(second.body).toEqual({ data: [expect.anything()], count: 3 });
  });

  it('in the limit/cursor envelope too, and 0 for no match', async () => {
    const answer = await list(token, { limit: '10', firstName: 'eq.Nobody' }, { prefer: 'count=exact' });
    expect(answer.body).toEqual({ data: [], meta: { cursor: null, hasMore: false }, count: 0 });
  });

  it('counts the tenant\'s records only', async () => {
    const other = await tenantWithContacts();
    expect((await list(other, {}, { prefer: 'count=exact' })).body.count).toBe(5);
    expect((await list(token, {}, { prefer: 'count=exact' })).body.count).toBe(5);
  });

  it('without the preference (or with another) nothing is counted', async () => {
    for (const headers of [{}, { prefer: 'count=planned' }, { prefer: 'return=representation' }] as Record<string, string>[]) {
      const answer = await list(token, {}, headers);
      expect(answer.status).toBe(200);
      expect(answer.body).not.toHaveProperty('count');
      expect(answer.headers.get('preference-applied')).toBeNull();
    }
  });
});
