import { z } from 'zod';
import { config } from '../../common/config';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { TenantReader } from '../../db/tenant-reads';
import { committedOffsets, topicBounds } from '../../common/kafka-groups';
import { createPlatformGroups, type PlatformGroups } from '../../workers/consumers/platform-groups';
import { topics } from '../../services/events/topics';
import { eventually, quietLogger } from '../helpers/audit';
import { crmTenant, startDataApiStack, type DataApiStack, type DataRecord } from '../helpers/data-api';
import { appUrl } from '../helpers/db';
import { registerAccount, uniqueEmail } from '../helpers/identity';
import { testKafka } from '../helpers/kafka';
import { auditRecordsOf, outboxOfType, send } from '../helpers/users';

/**
 * The sample module's subscriber end to end (modules/crm/subscribers.ts, group crm.user-created):
 * a user created through the gateway → auth.user.created in the outbox → the platform's relay →
 * platform.auth.events → the worker's platform groups (started here as workers/main.ts starts
 * them) → a contact in the tenant's crm contacts, through the data layer. The group is the
 * platform's own (`crm.user-created` on the real topic): if the platform's worker runs it too, the
 * two share its partitions and its receipts, so every event still takes effect once.
 */

jest.setTimeout(120_000);

const GROUP = 'crm.user-created';
let stack: DataApiStack;
let app: DatabasePool;
let groups: PlatformGroups;
let reads: TenantReader;

beforeAll(async () => {
  stack = await startDataApiStack('crm-subscriber');
  app = await createDbPool(appUrl(), { maxPoolSize: 4, name: 'crm-subscriber-app' });
  reads = await TenantReader.open(appUrl(), app, 2);
  groups = createPlatformGroups(config(), {
    kafka: testKafka(), db: app, reads, logger: quietLogger(), settings: { ...config().consumers, retryBackoffMs: 10 },
  });
  await groups.start();
});

afterAll(async () => {
  await groups?.stop();
  await reads?.end();
  await app?.end();
  await stack?.close();
});

/** Module tables force row-level security, for their owner too. */
const contactsOf = (tenantId: string) => withTenant(stack.owner, tenantId, (tx) => tx.any(sql.type(z.object({ firstName: z.string(), email: z.string().nullable() }))`
  SELECT "firstName", email FROM mod_crm.contacts WHERE tenant_id = ${tenantId} ORDER BY created_at
`));

/** The id of the auth.user.created event of a user, from the outbox. */
const userCreatedEventId = (tenantId: string, email: string) => stack.owner.oneFirst(sql.type(z.object({ id: z.string() }))`
  SELECT id FROM outbox_events WHERE tenant_id = ${tenantId} AND type = 'auth.user.created' AND data->>'email' = ${email}
`);

const handled = (tenantId: string, eventId: string) => stack.owner.exists(sql.unsafe`
  SELECT 1 FROM event_receipts WHERE tenant_id = ${tenantId} AND consumer_group = ${GROUP} AND event_id = ${eventId}
`);

it('creates a contact for a user created in a tenant with crm installed, through the data layer', async () => {
  const tenant = await crmTenant(stack);
  const email = uniqueEmail('contact');
  expect((await send(stack.gateway, 'POST', '/users', tenant.token, { email, firstName: 'Ada', lastName: 'Lovelace' })).status).toBe(201);

  await eventually(async () => (await contactsOf(tenant.tenantId)).length > 0, 'the contact', 60_000);
  // The owner registered before crm was installed: no contact for them, one for the new user.
  expect(await contactsOf(tenant.tenantId)).toEqual([{ firstName: 'Ada Lovelace', email }]);
  const listed = await send<{ data: DataRecord[] }>(stack.gateway, 'GET', `/data/crm/contacts?email=eq.${encodeURIComponent(email)}`, tenant.token);
  expect(listed.body.data).toEqual([expect.objectContaining({ firstName: 'Ada Lovelace', email, tenantId: tenant.tenantId })]);
  // As any record created through the data layer: its change event and its audit record (by the platform, no user).
  const [created] = await outboxOfType(stack.owner, tenant.tenantId, 'crm.contacts.created');
  expect(created.data).toMatchObject({ module: 'crm', model: 'contacts', after: expect.objectContaining({ email }) });
  expect(await auditRecordsOf(stack.owner, tenant.tenantId, 'data.crm.contacts.created')).toEqual([expect.objectContaining({ actorId: null })]);
  expect(await handled(tenant.tenantId, await userCreatedEventId(tenant.tenantId, email))).toBe(true);
});

it('passes over an event of a tenant without crm: no transaction, no receipt, nothing created', async () => {
  const account = await registerAccount(stack.gateway);
  const email = uniqueEmail('no-crm');
  expect((await send(stack.gateway, 'POST', '/users', account.accessToken, { email, firstName: 'Grace', lastName: 'Hopper' })).status).toBe(201);
  const eventId = await userCreatedEventId(account.tenant.id, email);
  await eventually(() => stack.owner.exists(sql.unsafe`SELECT 1 FROM outbox_events WHERE id = ${eventId} AND published_at IS NOT NULL`), 'the event published', 60_000);

  // The group (this file's members, or the platform worker's: they share it) moves past the event.
  const admin = testKafka().admin();
  await admin.connect();
  try {
    const ends = await topicBounds(admin, topics.auth.name);
    await eventually(async () => {
      const committed = await committedOffsets(admin, GROUP, topics.auth.name);
      return ends.every(({ partition, high }) => (committed.find((entry) => entry.partition === partition)?.offset ?? -1n) >= high);
    }, 'the group past the event', 60_000);
  } finally {
    await admin.disconnect();
  }
  expect(await handled(account.tenant.id, eventId)).toBe(false);
  expect(await contactsOf(account.tenant.id)).toEqual([]);
  expect(await outboxOfType(stack.owner, account.tenant.id, 'crm.contacts.created')).toEqual([]);
});
