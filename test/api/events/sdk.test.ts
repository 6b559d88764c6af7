import { status, type ServiceError } from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { newId } from '../../../common/ids';
import { createOrderedProducer, type Admin, type Producer } from '../../../common/kafka';
import { committedOffsets, topicBounds } from '../../../common/kafka-groups';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { EventBusClient, type DeliveredEvent } from '../../../sdk/events';
import { kafkaGroupId } from '../../../services/events/consumers/group-names';
import { topics } from '../../../services/events/topics';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { waitFor } from '../../helpers/http';
import { registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { consumeTenantEvents, ensureCatalogueTopics, publishAuthEvent, testKafka } from '../../helpers/kafka';
import { installModule } from '../../helpers/modules';

/**
 * The module SDK (sdk/events.ts) against the test gateway's EventService, Kafka and PostgreSQL:
 * publish with and without an idempotency key, and subscribe over the acknowledged Consume RPC —
 * in order, an event acknowledged only after its handler succeeded (a subscriber gone before it
 * answered leaves it to the group's next member), a failing handler tried BROKER_MAX_ATTEMPTS times
 * and then dead-lettered without holding up the events behind it.
 */

const MAX_ATTEMPTS = 3;

let gateway: TestGateway;
let owner: DatabasePool;
let producer: Producer;
let alice: RegisteredAccount;
let bus: EventBusClient;
const subscriptions: Array<{ close(): void; closed: Promise<void> }> = [];

beforeAll(async () => {
  await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics()]);
  [gateway, owner] = await Promise.all([
    startTestGateway({ env: { BROKER_MAX_ATTEMPTS: String(MAX_ATTEMPTS), BROKER_RETRY_BACKOFF_MS: '20', EVENTS_CONSUME_ACK_TIMEOUT_MS: '5000' } }),
    createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'events-sdk' }),
  ]);
  producer = createOrderedProducer(testKafka());
  await producer.connect();
  alice = await registerAccount(gateway);
  expect((await installModule(gateway, alice.accessToken, 'crm')).status).toBe(201);
  bus = new EventBusClient({ address: gateway.grpcAddress, token: () => alice.accessToken });
}, 60_000);

afterEach(async () => {
  for (const subscription of subscriptions.splice(0)) subscription.close();
});

afterAll(async () => {
  bus?.close();
  await gateway?.close();
  await Promise.allSettled([producer?.disconnect(), owner?.end()]);
});

const groupName = () => `crm.sdk-${randomBytes(4).toString('hex')}`;

/** Subscribes through the SDK and waits until the group exists (its start offsets are committed), so what is published next reaches it. */
async function subscribed(group: string, handler: (event: DeliveredEvent) => Promise<void>) {
  const subscription = bus.subscribe(['auth.user.created'], handler, { group });
  subscriptions.push(subscription);
  await waitFor(`group ${group} to exist`, async () => (await groupOffsets(group)) > 0, 15_000, 100);
  return subscription;
}

async function withAdmin<T>(work: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}

async function groupOffsets(group: string): Promise<number> {
  return (await withAdmin((admin) => committedOffsets(admin, kafkaGroupId(group, alice.tenant.id), topics.auth.name))).length;
}

const deadLetters = (group: string) => owner.any(sql.type(z.object({ eventId: z.string(), attemptCount: z.number(), lastError: z.string(), status: z.string() }))`
  SELECT event_id AS "eventId", attempt_count AS "attemptCount", last_error AS "lastError", status
  FROM event_dead_letters WHERE tenant_id = ${alice.tenant.id} AND consumer_group = ${kafkaGroupId(group, alice.tenant.id)}
`);

describe('EventBusClient.publish', () => {
  it('publishes a declared event with the idempotency key as its id, to the type\'s topic, keyed by its entity', async () => {
    const contactId = newId();
    const key = newId();
    const before = await withAdmin((admin) => topicBounds(admin, topics.data.name));
    const { eventId } = await bus.publish('crm.contact.created', { id: contactId, firstName: 'Ada' }, { idempotencyKey: key });
    expect(eventId).toBe(key);
    const [received] = await consumeTenantEvents({
      tenantId: alice.tenant.id, topics: [topics.data.name], until: (events) => events.some((e) => e.envelope.id === key),
      from: new Map([[topics.data.name, before.map(({ partition, high }) => ({ partition, offset: high }))]]),
    }).then((events) => events.filter((e) => e.envelope.id === key));
    expect(received).toMatchObject({ key: contactId, envelope: { type: 'crm.contact.created', source: 'crm', tenantId: alice.tenant.id, data: { id: contactId, firstName: 'Ada' } } });
  });

  it('generates a UUID v7 id without a key, and is refused as the gateway refuses (a kernel type, an undeclared one)', async () => {
    const { eventId } = await bus.publish('crm.contact.updated', { id: newId() });
    expect(eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const refusal = (call: Promise<unknown>) => call.then(() => null, (error: ServiceError) => error.code);
    expect(await refusal(bus.publish('auth.user.created', { user_id: newId() }))).toBe(status.PERMISSION_DENIED);
    expect(await refusal(bus.publish('crm.deal.won', { id: newId() }))).toBe(status.PERMISSION_DENIED);
  });
});

describe('EventBusClient.subscribe', () => {
  it('hands the tenant\'s events of the types asked for to the handler, in order, each once', async () => {
    const group = groupName();
    const handled: DeliveredEvent[] = [];
    await subscribed(group, async (event) => { handled.push(event); });
    const user = newId();
    const ids = [await publishAuthEvent(producer, alice.tenant.id, 'auth.user.created', user), await publishAuthEvent(producer, alice.tenant.id, 'auth.user.created', user)];
    await waitFor('both events handled', async () => ids.every((id) => handled.some((event) => event.id === id)), 20_000, 50);
    expect(handled.map((event) => event.id)).toEqual(ids);
    expect(handled[0]).toMatchObject({ type: 'auth.user.created', tenantId: alice.tenant.id, data: { user_id: user } });
  });

  it('acknowledges an event only after its handler succeeded: one a subscriber never answered goes to the group\'s next member', async () => {
    const group = groupName();
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => { release = resolve; });
    let seen = 0;
    const first = await subscribed(group, async () => { seen += 1; await stuck; });
    const id = await publishAuthEvent(producer, alice.tenant.id);
    await waitFor('the first subscriber to hold the event', async () => seen === 1, 20_000, 50);
    first.close();
    release();
    await first.closed;

    const handled: string[] = [];
    await subscribed(group, async (event) => { handled.push(event.id); });
    await waitFor('the event handled by the next subscriber', async () => handled.includes(id), 30_000, 100);
  });

  it('delivers again while the handler fails, then dead-letters the event after BROKER_MAX_ATTEMPTS and goes on with the next', async () => {
    const group = groupName();
    const poison = newId();
    const calls = new Map<string, number>();
    const handled: string[] = [];
    let flaky: string | undefined;
    await subscribed(group, async (event) => {
      calls.set(event.id, (calls.get(event.id) ?? 0) + 1);
      if ((event.data as { user_id: string }).user_id === poison) throw new Error('cannot onboard this user');
      if (event.id === flaky && calls.get(event.id)! < 2) throw new Error('a passing failure');
      handled.push(event.id);
    });
    // One partition for the three, so the two behind the poison event wait for its dead letter.
    const user = newId();
    const bad = await publishAuthEvent(producer, alice.tenant.id, 'auth.user.created', poison, user);
    flaky = await publishAuthEvent(producer, alice.tenant.id, 'auth.user.created', user);
    const after = await publishAuthEvent(producer, alice.tenant.id, 'auth.user.created', user);
    await waitFor('the events behind the poison one handled', async () => handled.includes(after), 30_000, 100);

    expect(calls.get(bad)).toBe(MAX_ATTEMPTS);
    expect(calls.get(flaky)).toBe(2);
    expect(handled).toEqual([flaky, after]);
    expect(await deadLetters(group)).toEqual([{
      eventId: bad, attemptCount: MAX_ATTEMPTS, status: 'pending', lastError: expect.stringContaining('cannot onboard this user') as string,
    }]);
  });

  it('ends with the refusal when the group may not subscribe (a module that declares nothing there)', async () => {
    const subscription = bus.subscribe(['auth.user.created'], async () => undefined, { group: 'nothing.handler' });
    await expect(subscription.closed).rejects.toMatchObject({ code: status.PERMISSION_DENIED });
  });
});
