import { newId } from '../../../common/ids';
import { crmTenant, memberWithPermissions, startDataApiStack, UUID_V7, type DataApiStack, type DataRecord } from '../../helpers/data-api';
import { registerAccount } from '../../helpers/identity';
import { installModule, uninstallModule } from '../../helpers/modules';
import { addMember, send } from '../../helpers/rbac';

/**
 * The record endpoints of the data layer (docs/reference/data.md; issue 16) through the real
 * gateway and PostgreSQL, with the sample module crm: companies {name required, country} and
 * contacts {firstName required, lastName, email, age, companyId → companies, tags jsonb}.
 */

let stack: DataApiStack;

beforeAll(async () => {
  stack = await startDataApiStack('data-records-test');
});

afterAll(async () => {
  await stack?.close();
});

interface Page { data: DataRecord[]; next_page_token?: string; meta?: { cursor: string | null; hasMore: boolean } }

const create = (token: string, model: string, body: Record<string, unknown>) => send<DataRecord>(stack.gateway, 'POST', `/data/crm/${model}`, token, body);
const read = (token: string, model: string, id: string, query = '') => send<DataRecord>(stack.gateway, 'GET', `/data/crm/${model}/${id}${query}`, token);
const patch = (token: string, model: string, id: string, body: Record<string, unknown>) => send<DataRecord>(stack.gateway, 'PATCH', `/data/crm/${model}/${id}`, token, body);
const remove = (token: string, model: string, id: string) => send(stack.gateway, 'DELETE', `/data/crm/${model}/${id}`, token);
const list = (token: string, model: string, query: Record<string, string> = {}) =>
  send<Page>(stack.gateway, 'GET', `/data/crm/${model}?${new URLSearchParams(query).toString()}`, token);

async function created(token: string, model: string, body: Record<string, unknown>): Promise<DataRecord> {
  const answer = await create(token, model, body);
  expect(answer.status).toBe(201);
  return answer.body;
}

function expectProblem(answer: { status: number; body: object }, status: number, type: string): void {
  expect({ status: answer.status, type: (answer.body as { type?: unknown }).type }).toEqual({ status, type: stack.gateway.problemType(type) });
}

describe('before the module is installed', () => {
  it('answers 404 module-not-found on every record route', async () => {
    const account = await registerAccount(stack.gateway);
    const token = account.accessToken;
    expectProblem(await list(token, 'companies'), 404, 'module-not-found');
    expectProblem(await create(token, 'companies', { name: 'Acme' }), 404, 'module-not-found');
    expectProblem(await read(token, 'companies', newId()), 404, 'module-not-found');
    expectProblem(await send(stack.gateway, 'GET', '/data/nosuchmodule/things', token), 404, 'module-not-found');
  });
});

describe('records of an installed module', () => {
  it('creates, reads, changes and soft-deletes a company and its contact', async () => {
    const { token, tenantId } = await crmTenant(stack);

    const company = await created(token, 'companies', { name: 'Acme' });
    expect(company).toEqual({
      id: expect.stringMatching(UUID_V7), tenantId, createdAt: expect.any(String), updatedAt: expect.any(String), deletedAt: null,
      name: 'Acme', country: null,
    });
    expect((await read(token, 'companies', company.id)).body).toEqual(company);

    const changed = await patch(token, 'companies', company.id, { country: 'FR' });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ ...company, country: 'FR', updatedAt: expect.any(String) });
    expect(Date.parse(String(changed.body.updatedAt))).toBeGreaterThanOrEqual(Date.parse(String(company.updatedAt)));

    const contact = await created(token, 'contacts', { firstName: 'Ada', age: 36, companyId: company.id, tags: { vip: true, since: [2024] } });
    expect(contact).toEqual(expect.objectContaining({ firstName: 'Ada', lastName: null, age: 36, companyId: company.id, tags: { vip: true, since: [2024] } }));

    expect((await remove(token, 'contacts', contact.id)).status).toBe(204);
    expectProblem(await read(token, 'contacts', contact.id), 404, 'not-found');
    expectProblem(await patch(token, 'contacts', contact.id, { age: 37 }), 404, 'not-found');
    expectProblem(await remove(token, 'contacts', contact.id), 404, 'not-found');
    expect((await list(token, 'contacts')).body.data).toEqual([]);
    const withDeleted = (await list(token, 'contacts', { deleted_at: 'is.notnull' })).body.data;
    expect(withDeleted).toEqual([expect.objectContaining({ id: contact.id, deletedAt: expect.any(String) })]);
  });

  it('answers 404 not-found for an unknown model or record, 400 for an id that is not a UUID', async () => {
    const { token } = await crmTenant(stack);
    expectProblem(await list(token, 'invoices'), 404, 'not-found');
    expectProblem(await create(token, 'invoices', { total: 1 }), 404, 'not-found');
    expectProblem(await read(token, 'companies', newId()), 404, 'not-found');
    expectProblem(await read(token, 'companies', 'not-a-uuid'), 400, 'validation-error');
  });

  it.each<[string, string, Record<string, unknown>, Record<string, unknown>]>([
    ['a required field missing', 'contacts', { lastName: 'Lovelace' }, { field: 'firstName', code: 'REQUIRED' }],
    ['null for a required field', 'companies', { name: null }, { field: 'name', code: 'REQUIRED' }],
    ['an unknown field', 'companies', { name: 'Acme', revenue: 10 }, { field: 'revenue', code: 'UNKNOWN_FIELD' }],
    ['a value of the wrong type', 'contacts', { firstName: 'Ada', age: 'old' }, { field: 'age', code: 'INVALID_TYPE' }],
    ['tenantId in the body', 'companies', { name: 'Acme', tenantId: newId() }, { field: 'tenantId', code: 'UNKNOWN_FIELD' }],
    ['id in the body', 'companies', { name: 'Acme', id: newId() }, { field: 'id', code: 'UNKNOWN_FIELD' }],
    ['createdAt in the body', 'companies', { name: 'Acme', createdAt: '2020-01-01T00:00:00Z' }, { field: 'createdAt', code: 'UNKNOWN_FIELD' }],
    ['a jsonb value over 256 KB', 'contacts', { firstName: 'Ada', tags: { text: 'x'.repeat(262_144) } }, { field: 'tags', code: 'TOO_LONG' }],
    ['a reference to no record', 'contacts', { firstName: 'Ada', companyId: newId() }, { field: 'companyId', code: 'INVALID_VALUE' }],
  ])('refuses a create with %s: 400 validation-error naming the field', async (_, model, body, error) => {
    const { token } = await crmTenant(stack);
    const refused = await create(token, model, body);
    expectProblem(refused, 400, 'validation-error');
    expect(refused.body.errors).toEqual([expect.objectContaining(error)]);
    expect((await list(token, model)).body.data).toEqual([]);
  });

  it('refuses an update that would grow the record past 1 MB, and keeps the record as it was', async () => {
    const { token } = await crmTenant(stack);
    const contact = await created(token, 'contacts', { firstName: 'Ada', tags: { text: 'x'.repeat(250_000) } });
    expect((await patch(token, 'contacts', contact.id, { lastName: 'y'.repeat(400_000) })).status).toBe(200);
    const refused = await patch(token, 'contacts', contact.id, { email: 'z'.repeat(450_000) });
    expectProblem(refused, 400, 'validation-error');
    expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'body', code: 'TOO_LONG' })]);
    expect((await read(token, 'contacts', contact.id)).body.email).toBeNull();
  });
});

describe('tenant isolation', () => {
  it('keeps another tenant\'s records out of reach: 404 to read, change or delete, 400 to reference', async () => {
    const a = await crmTenant(stack);
    const b = await crmTenant(stack);
    const company = await created(a.token, 'companies', { name: 'Acme' });

    expectProblem(await read(b.token, 'companies', company.id), 404, 'not-found');
    expectProblem(await patch(b.token, 'companies', company.id, { name: 'Stolen' }), 404, 'not-found');
    expectProblem(await remove(b.token, 'companies', company.id), 404, 'not-found');
    expect((await list(b.token, 'companies')).body.data).toEqual([]);

    const pointing = await create(b.token, 'contacts', { firstName: 'Eve', companyId: company.id });
    expectProblem(pointing, 400, 'validation-error');
    expect(pointing.body.errors).toEqual([expect.objectContaining({ field: 'companyId' })]);
    const own = await created(b.token, 'contacts', { firstName: 'Eve' });
    expectProblem(await patch(b.token, 'contacts', own.id, { companyId: company.id }), 400, 'validation-error');

    expect((await read(a.token, 'companies', company.id)).body).toEqual(company);
  });
});

describe('permissions', () => {
  it('needs {module}.{model}.<action>; write holds create and update, not delete', async () => {
    const { token, tenantId } = await crmTenant(stack);
    const company = await created(token, 'companies', { name: 'Acme' });

    const member = await addMember(stack.gateway, stack.owner, tenantId, 'member');
    expectProblem(await list(member.token, 'contacts'), 403, 'forbidden');
    expectProblem(await create(member.token, 'contacts', { firstName: 'Ada' }), 403, 'forbidden');
    expectProblem(await read(member.token, 'companies', company.id), 403, 'forbidden');

    const writer = await memberWithPermissions(stack, tenantId, 'contact-writer', ['crm.contacts.write', 'crm.companies.read']);
    const contact = await create(writer.token, 'contacts', { firstName: 'Ada', companyId: company.id });
    expect(contact.status).toBe(201);
    expect((await patch(writer.token, 'contacts', contact.body.id, { lastName: 'Lovelace' })).status).toBe(200);
    expectProblem(await remove(writer.token, 'contacts', contact.body.id), 403, 'forbidden');
    expectProblem(await read(writer.token, 'contacts', contact.body.id), 403, 'forbidden');
    expectProblem(await create(writer.token, 'companies', { name: 'Other' }), 403, 'forbidden');
    expect((await read(writer.token, 'companies', company.id)).status).toBe(200);
  });

  it('embedding another model needs its read permission too', async () => {
    const { token, tenantId } = await crmTenant(stack);
    const company = await created(token, 'companies', { name: 'Acme' });
    const contact = await created(token, 'contacts', { firstName: 'Ada', companyId: company.id });
    const reader = await memberWithPermissions(stack, tenantId, 'contact-reader', ['crm.contacts.read']);
    expect((await read(reader.token, 'contacts', contact.id)).status).toBe(200);
    expect((await list(reader.token, 'contacts')).status).toBe(200);
    expectProblem(await read(reader.token, 'contacts', contact.id, '?select=firstName,companies(name)'), 403, 'forbidden');
    expectProblem(await list(reader.token, 'contacts', { select: 'firstName,companies(name)' }), 403, 'forbidden');
  });
});

describe('lists', () => {
  it('filters, orders and embeds companies into contacts (object) and contacts into companies (array)', async () => {
    const { token } = await crmTenant(stack);
    const acme = await created(token, 'companies', { name: 'Acme', country: 'FR' });
    const globex = await created(token, 'companies', { name: 'Globex', country: 'US' });
    await created(token, 'contacts', { firstName: 'Ada', age: 36, companyId: acme.id });
    await created(token, 'contacts', { firstName: 'Grace', age: 45, companyId: acme.id });
    await created(token, 'contacts', { firstName: 'Alan', age: 41, companyId: globex.id });
    await created(token, 'contacts', { firstName: 'Young', age: 12 });

    const contacts = await list(token, 'contacts', { age: 'gte.30', order: 'age.desc', select: 'firstName,age,companies(name)' });
    expect(contacts.status).toBe(200);
    expect(contacts.body).toEqual({ data: [
      { firstName: 'Grace', age: 45, companies: { name: 'Acme' } },
      { firstName: 'Alan', age: 41, companies: { name: 'Globex' } },
      { firstName: 'Ada', age: 36, companies: { name: 'Acme' } },
    ] });

    const companies = await list(token, 'companies', { country: 'eq.FR', select: 'name,contacts(firstName)' });
    expect(companies.body.data).toEqual([{ name: 'Acme', contacts: expect.arrayContaining([{ firstName: 'Ada' }, { firstName: 'Grace' }]) }]);
    expect(companies.body.data[0].contacts).toHaveLength(2);

    const one = await read(token, 'contacts', (await list(token, 'contacts', { firstName: 'eq.Alan' })).body.data[0].id, '?select=firstName,companies(name,country)');
    expect(one.body).toEqual({ firstName: 'Alan', companies: { name: 'Globex', country: 'US' } });
  });

  it('pages with page_size/page_token and limit/cursor; page_size over 100 is 400', async () => {
    const { token } = await crmTenant(stack);
    for (const name of ['A', 'B', 'C']) await created(token, 'companies', { name });

    const first = await list(token, 'companies', { page_size: '2', order: 'name.asc' });
    expect(first.body.data.map((row) => row.name)).toEqual(['A', 'B']);
    expect(first.body.next_page_token).toEqual(expect.any(String));
    const second = await list(token, 'companies', { page_size: '2', order: 'name.asc', page_token: first.body.next_page_token! });
    expect(second.body).toEqual({ data: [expect.objectContaining({ name: 'C' })] });

    const byCursor = await list(token, 'companies', { limit: '2', order: 'name.asc' });
    expect(byCursor.body).toEqual({ data: [expect.objectContaining({ name: 'A' }), expect.objectContaining({ name: 'B' })], meta: { cursor: expect.any(String), hasMore: true } });

    expectProblem(await list(token, 'companies', { page_size: '101' }), 400, 'validation-error');
  });

  it('answers 413 payload-too-large, before any body is sent, for a response over 1 MB', async () => {
    const { token } = await crmTenant(stack);
    for (let index = 0; index < 5; index += 1) await created(token, 'contacts', { firstName: `C${index}`, tags: { text: 'x'.repeat(250_000) } });
    expectProblem(await list(token, 'contacts'), 413, 'payload-too-large');
    expect((await list(token, 'contacts', { select: 'firstName' })).body.data).toHaveLength(5);
  });
});

describe('uninstall and reinstall', () => {
  it('404s the routes while uninstalled and finds the data again after reinstalling', async () => {
    const { token } = await crmTenant(stack);
    const company = await created(token, 'companies', { name: 'Acme' });
    expect((await uninstallModule(stack.gateway, token, 'crm')).status).toBe(204);
    expectProblem(await read(token, 'companies', company.id), 404, 'module-not-found');
    expectProblem(await create(token, 'companies', { name: 'Other' }), 404, 'module-not-found');
    expect((await installModule(stack.gateway, token, 'crm')).status).toBe(201);
    expect((await read(token, 'companies', company.id)).body).toEqual(company);
  });
});
