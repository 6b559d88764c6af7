import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { withTenant } from '../../../db/tenant';
import { provisionModules } from '../../../services/data/provision';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { registerAccount } from '../../helpers/identity';
import { installModule } from '../../helpers/modules';
import { send } from '../../helpers/rbac';
import { auditRecordsOf } from '../../helpers/users';

/**
 * What a write of a record does besides the write (issue 16): the module's before hooks (crm:
 * email lower-cased, a negative age refused), and, in the same transaction, the change-capture
 * event on platform.data.events and the audit record with before and after.
 */

let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'data-hooks-test-owner' });
  await provisionModules(owner, gateway.runtime.modules.catalogue.list());
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

type DataRecord = Record<string, unknown> & { id: string };

async function crmTenant() {
  const account = await registerAccount(gateway);
  expect((await installModule(gateway, account.accessToken, 'crm')).status).toBe(201);
  return { token: account.accessToken, tenantId: account.tenant.id, userId: account.user.id };
}

const create = (token: string, body: Record<string, unknown>) => send<DataRecord>(gateway, 'POST', '/data/crm/contacts', token, body);
const patch = (token: string, id: string, body: Record<string, unknown>) => send<DataRecord>(gateway, 'PATCH', `/data/crm/contacts/${id}`, token, body);

const outboxRow = z.object({ topic: z.string(), partitionKey: z.string(), type: z.string(), source: z.string(), data: z.record(z.string(), z.unknown()) });

/** The tenant's data-layer events, oldest first. */
const dataEventsOf = (tenantId: string) => owner.any(sql.type(outboxRow)`
  SELECT topic, partition_key AS "partitionKey", type, source, data FROM outbox_events
  WHERE tenant_id = ${tenantId} AND type LIKE 'crm.%' ORDER BY seq
`);

/** The tenant's stored contacts; row-level security is FORCEd, so even the owner reads in the tenant. */
const storedContacts = (tenantId: string) => withTenant(owner, tenantId, (tx) => tx.any(sql.type(z.object({ email: z.string().nullable(), age: z.number().nullable() }))`
  SELECT email, age FROM mod_crm.contacts WHERE tenant_id = ${tenantId} ORDER BY created_at
`));

describe('before hooks (crm)', () => {
  it('refuses a negative age with 400 naming age, on create and update, and writes nothing', async () => {
    const { token, tenantId } = await crmTenant();
    const refused = await create(token, { firstName: 'Ada', age: -1 });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(expect.objectContaining({
      type: gateway.problemType('validation-error'), errors: [expect.objectContaining({ field: 'age', code: 'OUT_OF_RANGE' })],
    }));
    expect(await storedContacts(tenantId)).toEqual([]);
    expect(await dataEventsOf(tenantId)).toEqual([]);
    expect(await auditRecordsOf(owner, tenantId, 'data.crm.contacts.created')).toEqual([]);

    const ada = (await create(token, { firstName: 'Ada', age: 36 })).body;
    expect((await patch(token, ada.id, { age: -5 })).status).toBe(400);
    expect(await storedContacts(tenantId)).toEqual([{ email: null, age: 36 }]);
    expect((await dataEventsOf(tenantId)).map((event) => event.type)).toEqual(['crm.contacts.created']);
  });

  it('stores email lower-cased, on create and update, and answers the stored record', async () => {
    const { token, tenantId } = await crmTenant();
    const ada = await create(token, { firstName: 'Ada', email: 'Ada.Lovelace@Example.COM' });
    expect(ada.status).toBe(201);
    expect(ada.body.email).toBe('ada.lovelace@example.com');
    const changed = await patch(token, ada.body.id, { email: 'ADA@ANALYTICAL.ENGINE' });
    expect(changed.body.email).toBe('ada@analytical.engine');
    expect(await storedContacts(tenantId)).toEqual([{ email: 'ada@analytical.engine', age: null }]);
    // A filter with eq finds the one spelling stored.
    const found = await send<{ data: DataRecord[] }>(gateway, 'GET', '/data/crm/contacts?email=eq.ada@analytical.engine', token);
    expect(found.body.data.map((record) => record.id)).toEqual([ada.body.id]);
  });

  it('runs no hook of another model', async () => {
    const { token } = await crmTenant();
    const company = await send<DataRecord>(gateway, 'POST', '/data/crm/companies', token, { name: 'ACME' });
    expect(company.body.name).toBe('ACME');
  });
});

describe('after events and audit records', () => {
  it('writes crm.contacts.created|updated|deleted on platform.data.events, keyed by record id, with the record', async () => {
    const { token, tenantId, userId } = await crmTenant();
    const created = (await create(token, { firstName: 'Ada', age: 36 })).body;
    const updated = (await patch(token, created.id, { lastName: 'Lovelace' })).body;
    expect((await send(gateway, 'DELETE', `/data/crm/contacts/${created.id}`, token)).status).toBe(204);

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

    const audit = (action: string) => auditRecordsOf(owner, tenantId, `data.crm.contacts.${action}`);
    const who = { entityType: 'contacts', entityId: created.id, actorId: userId, meta: { module: 'crm' } };
    expect(await audit('created')).toEqual([expect.objectContaining({ ...who, before: null, after: created })]);
    expect(await audit('updated')).toEqual([expect.objectContaining({ ...who, before: created, after: updated })]);
    expect(await audit('deleted')).toEqual([expect.objectContaining({ ...who, before: updated, after: deleted })]);
  });

  it('writes neither for a write that fails', async () => {
    const { token, tenantId } = await crmTenant();
    const missing = await send(gateway, 'POST', '/data/crm/contacts', token, { firstName: 'Ada', companyId: '0190b8c4-0000-7000-8000-000000000000' });
    expect(missing.status).toBe(400);
    expect(await dataEventsOf(tenantId)).toEqual([]);
  });
});
