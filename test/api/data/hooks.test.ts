import { z } from 'zod';
import { sql } from '../../../db/pool';
import { withTenant } from '../../../db/tenant';
import { crmTenant, startDataApiStack, type DataApiStack, type DataRecord } from '../../helpers/data-api';
import { send } from '../../helpers/rbac';
import { auditRecordsOf } from '../../helpers/users';

/**
 * What a write of a record does besides the write (issue 16): the module's before hooks (crm:
 * email lower-cased, a negative age refused), and, in the same transaction, the change-capture
 * event on platform.data.events and the audit record with before and after.
 */

let stack: DataApiStack;

beforeAll(async () => {
  stack = await startDataApiStack('data-hooks-test');
});

afterAll(async () => {
  await stack?.close();
});

const create = (token: string, body: Record<string, unknown>) => send<DataRecord>(stack.gateway, 'POST', '/data/crm/contacts', token, body);
const patch = (token: string, id: string, body: Record<string, unknown>) => send<DataRecord>(stack.gateway, 'PATCH', `/data/crm/contacts/${id}`, token, body);

const outboxRow = z.object({ topic: z.string(), partitionKey: z.string(), type: z.string(), source: z.string(), data: z.record(z.string(), z.unknown()) });

/** The tenant's data-layer events, oldest first. */
const dataEventsOf = (tenantId: string) => stack.owner.any(sql.type(outboxRow)`
  SELECT topic, partition_key AS "partitionKey", type, source, data FROM outbox_events
  WHERE tenant_id = ${tenantId} AND type LIKE 'crm.%' ORDER BY seq
`);

/** The tenant's stored contacts; row-level security is FORCEd, so even the owner reads in the tenant. */
const storedContacts = (tenantId: string) => withTenant(stack.owner, tenantId, (tx) => tx.any(sql.type(z.object({ email: z.string().nullable(), age: z.number().nullable() }))`
  SELECT email, age FROM mod_crm.contacts WHERE tenant_id = ${tenantId} ORDER BY created_at
`));

describe('before hooks (crm)', () => {
  it('refuses a negative age with 400 naming age, on create and update, and writes nothing', async () => {
    const { token, tenantId } = await crmTenant(stack);
    const refused = await create(token, { firstName: 'Ada', age: -1 });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(expect.objectContaining({
      type: stack.gateway.problemType('validation-error'), errors: [expect.objectContaining({ field: 'age', code: 'OUT_OF_RANGE' })],
    }));
    expect(await storedContacts(tenantId)).toEqual([]);
    expect(await dataEventsOf(tenantId)).toEqual([]);
    expect(await auditRecordsOf(stack.owner, tenantId, 'data.crm.contacts.created')).toEqual([]);

    const ada = (await create(token, { firstName: 'Ada', age: 36 })).body;
    expect((await patch(token, ada.id, { age: -5 })).status).toBe(400);
    expect(await storedContacts(tenantId)).toEqual([{ email: null, age: 36 }]);
    expect((await dataEventsOf(tenantId)).map((event) => event.type)).toEqual(['crm.contacts.created']);
  });

  it('stores email lower-cased, on create and update, and answers the stored record', async () => {
    const { token, tenantId } = await crmTenant(stack);
    const ada = await create(token, { firstName: 'Ada', email: 'Ada.Lovelace@Example.COM' });
    expect(ada.status).toBe(201);
    expect(ada.body.email).toBe('ada.lovelace@example.com');
    const changed = await patch(token, ada.body.id, { email: 'ADA@ANALYTICAL.ENGINE' });
    expect(changed.body.email).toBe('ada@analytical.engine');
    expect(await storedContacts(tenantId)).toEqual([{ email: 'ada@analytical.engine', age: null }]);
    // A filter with eq finds the one spelling stored.
    const found = await send<{ data: DataRecord[] }>(stack.gateway, 'GET', '/data/crm/contacts?email=eq.ada@analytical.engine', token);
    expect(found.body.data.map((record) => record.id)).toEqual([ada.body.id]);
  });

  it('runs no hook of another model', async () => {
    const { token } = await crmTenant(stack);
    const company = await send<DataRecord>(stack.gateway, 'POST', '/data/crm/companies', token, { name: 'ACME' });
    expect(company.body.name).toBe('ACME');
  });
});

describe('after events and audit records', () => {
  it('writes crm.contacts.created|updated|deleted on platform.data.events, keyed by record id, with the record', async () => {
    const { token, tenantId, userId } = await crmTenant(stack);
    const created = (await create(token, { firstName: 'Ada', age: 36 })).body;
    const updated = (await patch(token, created.id, { lastName: 'Lovelace' })).body;
    expect((await send(stack.gateway, 'DELETE', `/data/crm/contacts/${created.id}`, token)).status).toBe(204);

    const events = await dataEventsOf(tenantId);
    const common = { topic: 'platform.data.events', partitionKey: created.id, source: 'data' };
    const meta = { id: created.id, module: 'crm', model: 'contacts' };
    expect(events).toEqual([
      { ...common, type: 'crm.contacts.created', data: { ...meta, before: null, after: created } },
      { ...common, type: 'crm.contacts.updated', data: { ...meta, before: created, after: updated } },
      {
        ...common, type: 'crm.contacts.deleted',
        data: { ...meta, before: updated, after: { ...updated, deletedAt: expect.any(String), updatedAt: expect.any(String) } },
      },
    ]);
    const deleted = events[2].data.after as DataRecord;
    expect(deleted.deletedAt).not.toBeNull();

    const audit = (action: string) => auditRecordsOf(stack.owner, tenantId, `data.crm.contacts.${action}`);
    const who = { entityType: 'contacts', entityId: created.id, actorId: userId, meta: { module: 'crm' } };
    expect(await audit('created')).toEqual([expect.objectContaining({ ...who, before: null, after: created })]);
    expect(await audit('updated')).toEqual([expect.objectContaining({ ...who, before: created, after: updated })]);
    expect(await audit('deleted')).toEqual([expect.objectContaining({ ...who, before: updated, after: deleted })]);
  });

  it('writes neither for a write that fails', async () => {
    const { token, tenantId } = await crmTenant(stack);
    const missing = await send(stack.gateway, 'POST', '/data/crm/contacts', token, { firstName: 'Ada', companyId: '0190b8c4-0000-7000-8000-000000000000' });
    expect(missing.status).toBe(400);
    expect(await dataEventsOf(tenantId)).toEqual([]);
  });
});
