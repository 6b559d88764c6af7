import { z } from 'zod';
import { newId } from '../../../common/ids';
import { sql } from '../../../db/pool';
import { withTenant } from '../../../db/tenant';
import {
  crmTenant, crmTenantOnFreePlan, memberWithPermissions, recordsUsed, startDataApiStack, UUID_V7, type DataApiStack, type DataRecord,
} from '../../helpers/data-api';
import { send } from '../../helpers/rbac';
import { auditRecordsOf } from '../../helpers/users';

/**
 * Nested writes (issue 16): `POST /data/crm/companies` with `contacts: [...]` creates the company and
 * its contacts in one transaction through the real gateway and PostgreSQL: the reference set by the
 * platform, every contact's before hooks (crm: email lower-cased, a negative age refused), every
 * record's event and audit record, every record counted against the plan, every model's create
 * permission; a refusal of any record writes nothing.
 */

let stack: DataApiStack;

beforeAll(async () => {
  stack = await startDataApiStack('data-nested-test');
});

afterAll(async () => {
  await stack?.close();
});

type Company = DataRecord & { contacts: DataRecord[] };
interface Problem { type: string; detail: string; errors?: { field: string; code: string; message: string }[]; limit?: unknown }

const createCompany = (token: string, body: Record<string, unknown>) => send<Company & Problem>(stack.gateway, 'POST', '/data/crm/companies', token, body);

/** Every company and contact row of the tenant, soft-deleted or not; row-level security is FORCEd, so read in the tenant. */
const storedRows = (tenantId: string) => withTenant(stack.owner, tenantId, (tx) => tx.oneFirst(sql.type(z.object({ count: z.number() }))`
  SELECT ((SELECT count(*) FROM mod_crm.companies WHERE tenant_id = ${tenantId}) + (SELECT count(*) FROM mod_crm.contacts WHERE tenant_id = ${tenantId}))::int AS count
`));

const dataEvent = z.object({ topic: z.string(), partitionKey: z.string(), type: z.string(), data: z.record(z.string(), z.unknown()) });

/** The tenant's data-layer events (outbox rows of platform.data.events), oldest first. */
const dataEventsOf = (tenantId: string) => stack.owner.any(sql.type(dataEvent)`
  SELECT topic, partition_key AS "partitionKey", type, data FROM outbox_events
  WHERE tenant_id = ${tenantId} AND topic = 'platform.data.events' ORDER BY seq
`);

/** Nothing of a refused create exists: no row, no event, no audit record, no count. */
async function expectNothingWritten(tenantId: string, recordsBefore = 0): Promise<void> {
  expect(await storedRows(tenantId)).toBe(0);
  expect(await dataEventsOf(tenantId)).toEqual([]);
  expect(await auditRecordsOf(stack.owner, tenantId, 'data.crm.companies.created')).toEqual([]);
  expect(await auditRecordsOf(stack.owner, tenantId, 'data.crm.contacts.created')).toEqual([]);
  expect(await recordsUsed(stack, tenantId)).toBe(recordsBefore);
}

function expectProblem(answer: { status: number; body: Problem }, status: number, type: string, fields?: [string, string][]): void {
  expect({ status: answer.status, type: answer.body.type }).toEqual({ status, type: stack.gateway.problemType(type) });
  if (fields) expect(answer.body.errors?.map(({ field, code }) => [field, code])).toEqual(fields);
}

const THREE_CONTACTS = [
  { firstName: 'Ada', email: 'Ada@Example.COM', age: 36 },
  { firstName: 'Grace', lastName: 'Hopper', email: 'GRACE@NAVY.MIL' },
  { firstName: 'Alan', tags: ['logic'] },
];

describe('a company created with its contacts', () => {
  it('creates all four records in one transaction, the contacts referencing the company, hooks run on each', async () => {
    const { token, tenantId } = await crmTenant(stack);
    const answer = await createCompany(token, { name: 'Acme', country: 'GB', contacts: THREE_CONTACTS });
    expect(answer.status).toBe(201);
    const company = answer.body;
    expect(company).toEqual({
      id: expect.stringMatching(UUID_V7), tenantId, createdAt: expect.any(String), updatedAt: expect.any(String), deletedAt: null,
      name: 'Acme', country: 'GB', contacts: expect.any(Array),
    });
    const system = { id: expect.stringMatching(UUID_V7), tenantId, createdAt: expect.any(String), updatedAt: expect.any(String), deletedAt: null, companyId: company.id };
    expect(company.contacts).toEqual([
      { ...system, firstName: 'Ada', lastName: null, email: 'ada@example.com', age: 36, tags: null },
      { ...system, firstName: 'Grace', lastName: 'Hopper', email: 'grace@navy.mil', age: null, tags: null },
      { ...system, firstName: 'Alan', lastName: null, email: null, age: null, tags: ['logic'] },
    ]);
    expect(new Set(company.contacts.map((contact) => contact.id)).size).toBe(3);

    // The answer is what select=*,contacts(*) reads back.
    const read = await send<Company>(stack.gateway, 'GET', `/data/crm/companies/${company.id}?select=*,contacts(*)`, token);
    expect(read.body).toEqual(company);
    expect(await recordsUsed(stack, tenantId)).toBe(4);
  });

  it('writes one event on platform.data.events and one audit record per record, keyed by its id', async () => {
    const { token, tenantId, userId } = await crmTenant(stack);
    const company = (await createCompany(token, { name: 'Acme', contacts: THREE_CONTACTS })).body;
    const { contacts, ...companyRecord } = company;

    const meta = (model: string, id: string) => ({ id, module: 'crm', model });
    expect(await dataEventsOf(tenantId)).toEqual([
      { topic: 'platform.data.events', partitionKey: company.id, type: 'crm.companies.created', data: { ...meta('companies', company.id), before: null, after: companyRecord } },
      ...contacts.map((contact) => ({
        topic: 'platform.data.events', partitionKey: contact.id, type: 'crm.contacts.created', data: { ...meta('contacts', contact.id), before: null, after: contact },
      })),
    ]);
    const who = { actorId: userId, meta: { module: 'crm' }, before: null };
    expect(await auditRecordsOf(stack.owner, tenantId, 'data.crm.companies.created')).toEqual([
      expect.objectContaining({ ...who, entityType: 'companies', entityId: company.id, after: companyRecord }),
    ]);
    expect(await auditRecordsOf(stack.owner, tenantId, 'data.crm.contacts.created')).toEqual(contacts.map((contact) => expect.objectContaining({
      ...who, entityType: 'contacts', entityId: contact.id, after: contact,
    })));
  });

  it('answers an empty relation as an empty array, and a company alone as before', async () => {
    const { token } = await crmTenant(stack);
    const empty = await createCompany(token, { name: 'Acme', contacts: [] });
    expect(empty.status).toBe(201);
    expect(empty.body.contacts).toEqual([]);
    const alone = await createCompany(token, { name: 'Solo' });
    expect(alone.status).toBe(201);
    expect(alone.body).not.toHaveProperty('contacts');
  });
});

describe('a refused nested create writes nothing', () => {
  it('a contact refused by its hook (age -1): the hook\'s 400 naming the field by path, and no company', async () => {
    const { token, tenantId } = await crmTenant(stack);
    const refused = await createCompany(token, { name: 'Acme', contacts: [{ firstName: 'Ada' }, { firstName: 'Bob', age: -1 }] });
    expectProblem(refused, 400, 'validation-error', [['contacts[1].age', 'OUT_OF_RANGE']]);
    await expectNothingWritten(tenantId);
  });

  it('a contact naming companyId: 400 naming it, since the platform sets it', async () => {
    const { token, tenantId } = await crmTenant(stack);
    const other = (await createCompany(token, { name: 'Other' })).body;
    const refused = await createCompany(token, { name: 'Acme', contacts: [{ firstName: 'Ada', companyId: other.id }] });
    expectProblem(refused, 400, 'validation-error', [['contacts[0].companyId', 'UNKNOWN_FIELD']]);
    expect(refused.body.errors![0].message).toMatch(/set by the platform/);
    expect(await storedRows(tenantId)).toBe(1);
  });

  it('every mistake of every record in one errors[], named by path', async () => {
    const { token, tenantId } = await crmTenant(stack);
    const refused = await createCompany(token, { contacts: [{ firstName: 'Ada', age: 'old' }, { lastName: 'X', id: newId() }] });
    expectProblem(refused, 400, 'validation-error', [
      ['name', 'REQUIRED'], ['contacts[0].age', 'INVALID_TYPE'], ['contacts[1].id', 'UNKNOWN_FIELD'], ['contacts[1].firstName', 'REQUIRED'],
    ]);
    await expectNothingWritten(tenantId);
  });

  it('one level deep: a contact nesting a relation of its own is 400 naming it', async () => {
    const { token, tenantId } = await crmTenant(stack);
    const refused = await createCompany(token, { name: 'Acme', contacts: [{ firstName: 'Ada', companies: [{ name: 'Inner' }] }] });
    expectProblem(refused, 400, 'validation-error', [['contacts[0].companies', 'UNKNOWN_FIELD']]);
    expect(refused.body.errors![0].message).toMatch(/one level deep/);
    await expectNothingWritten(tenantId);
  });

  it('at most 100 nested records: 101 is 400 naming the relation', async () => {
    const { token, tenantId } = await crmTenant(stack);
    const contacts = Array.from({ length: 101 }, (_, index) => ({ firstName: `c${index}` }));
    expectProblem(await createCompany(token, { name: 'Acme', contacts }), 400, 'validation-error', [['contacts', 'TOO_LONG']]);
    await expectNothingWritten(tenantId);

    const hundred = await createCompany(token, { name: 'Acme', contacts: contacts.slice(0, 100) });
    expect(hundred.status).toBe(201);
    expect(hundred.body.contacts).toHaveLength(100);
    expect(hundred.body.contacts.map((contact) => contact.firstName)).toEqual(contacts.slice(0, 100).map((contact) => contact.firstName));
    expect(await recordsUsed(stack, tenantId)).toBe(101);
  });

  it('a PATCH with a nested relation is 400 naming it: nested records are written by a create only', async () => {
    const { token, tenantId } = await crmTenant(stack);
    const company = (await createCompany(token, { name: 'Acme' })).body;
    const refused = await send<Problem>(stack.gateway, 'PATCH', `/data/crm/companies/${company.id}`, token, { name: 'Acme 2', contacts: [{ firstName: 'Ada' }] });
    expectProblem(refused, 400, 'validation-error', [['contacts', 'UNKNOWN_FIELD']]);
    expect(refused.body.errors![0].message).toMatch(/only by a create/);
    expect(await storedRows(tenantId)).toBe(1);
  });
});

describe('the plan\'s records limit', () => {
  it('counts every record: 402 when the contacts would pass the ceiling, and nothing is written', async () => {
    const { token, tenantId } = await crmTenantOnFreePlan(stack, 997);

    // A company and three contacts are four records: 1001 on a plan of 1000.
    const refused = await createCompany(token, { name: 'Acme', contacts: THREE_CONTACTS });
    expectProblem(refused, 402, 'plan-limit-exceeded');
    expect(refused.body.limit).toEqual({ resource: 'records', allowed: 1000, current: 997, planId: 'free' });
    expect(refused.body.detail).toMatch(/4 more asked for/);
    await expectNothingWritten(tenantId, 997);

    // Three records reach the ceiling exactly.
    const fits = await createCompany(token, { name: 'Acme', contacts: THREE_CONTACTS.slice(0, 2) });
    expect(fits.status).toBe(201);
    expect(await recordsUsed(stack, tenantId)).toBe(1000);
  });
});

describe('permissions', () => {
  it('needs the create permission of every model written: 403 without crm.contacts.create, nothing written', async () => {
    const { tenantId } = await crmTenant(stack);
    const creator = await memberWithPermissions(stack, tenantId, 'company-creator', ['crm.companies.create']);
    const refused = await createCompany(creator.token, { name: 'Acme', contacts: [{ firstName: 'Ada' }] });
    expectProblem(refused, 403, 'forbidden');
    expect(refused.body.detail).toMatch(/crm\.contacts\.create/);
    await expectNothingWritten(tenantId);
    // The company alone is theirs to create.
    expect((await createCompany(creator.token, { name: 'Acme' })).status).toBe(201);
  });
});
