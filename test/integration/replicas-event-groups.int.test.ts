import type { Client } from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { newId } from '../../common/ids';
import { createOrderedProducer, type Admin, type Producer } from '../../common/kafka';
import { committedOffsets, describeGroup } from '../../common/kafka-groups';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { EventBusClient } from '../../sdk/events';
import { kafkaGroupId } from '../../services/events/consumers/group-names';
import { topics } from '../../services/events/topics';
import { startTestGateway, type TestGateway } from '../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../helpers/db';
import { eventServiceClient, subscribe, type OpenSubscription } from '../helpers/grpc';
import { waitFor } from '../helpers/http';
import { registerAccount, type RegisteredAccount } from '../helpers/identity';
import { ensureCatalogueTopics, publishAuthEvent, testKafka } from '../helpers/kafka';
import { installModule } from '../helpers/modules';
import { copiesById } from '../helpers/replica-processes';

/**
 * One tenant's consumer group read through two gateways (docs/decisions/events.md, gRPC consumer-group
 * RPCs and Consume): two test gateways, each with its own runtime and Kafka clients, serve the
 * EventService, and a stream of the same group is opened through each. Each stream is one member of the
 * Kafka group: every event published while both are members reaches exactly one of them, once. With
 * Consume (the SDK's acknowledged stream), when one subscriber leaves the other receives the rest and
 * nothing already acknowledged comes again. grpc-subscribe.test.ts and sdk.test.ts cover one gateway.
 */

jest.setTimeout(180_000);

const AUTH = topics.auth.name;

let gateways: TestGateway[];
let owner: DatabasePool;
let producer: Producer;
let admin: Admin;
let alice: RegisteredAccount;
const grpcClients: Client[] = [];
const streams: OpenSubscription[] = [];
const buses: EventBusClient[] = [];

beforeAll(async () => {
  await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics()]);
  [gateways, owner] = await Promise.all([
    Promise.all([startTestGateway(), startTestGateway()]),
    createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'replicas-event-groups' }),
  ]);
  producer = createOrderedProducer(testKafka());
  admin = testKafka().admin();
  await Promise.all([producer.connect(), admin.connect()]);
  alice = await registerAccount(gateways[0]);
  expect((await installModule(gateways[0], alice.accessToken, 'crm')).status).toBe(201);
}, 90_000);

afterAll(async () => {
  for (const stream of streams) stream.cancel();
  for (const bus of buses) bus.close();
  for (const client of grpcClients) client.close();
  await Promise.all((gateways ?? []).map((gateway) => gateway.close()));
  await Promise.allSettled([producer?.disconnect(), admin?.disconnect(), owner?.end()]);
});

const groupName = () => `crm.replicas-${randomBytes(4).toString('hex')}`;
const kafkaGroup = (group: string) => kafkaGroupId(group, alice.tenant.id);

/** The group exists (its start offsets committed by the first Subscribe), so what is published next reaches it. */
const untilGroupExists = (group: string) => waitFor(`group ${group} to exist`,
  async () => (await committedOffsets(admin, kafkaGroup(group), AUTH)).length > 0, 30_000, 100);

/** The group has settled with this many members (each stream one member, its share of partitions assigned). */
const untilMembers = (group: string, count: number) => waitFor(`group ${group} stable with ${count} member(s)`, async () => {
  const { state, members } = await describeGroup(admin, kafkaGroup(group));
  return state === 'Stable' && members === count;
}, 90_000, 200);

/** `count` auth.user.created events of alice's tenant, each of a user of its own (so they spread over the partitions). */
async function publishUsers(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) ids.push(await publishAuthEvent(producer, alice.tenant.id, 'auth.user.created', newId()));
  return ids;
}

const receipts = (group: string, ids: readonly string[]) => owner.oneFirst(sql.type(z.object({ n: z.number() }))`
  SELECT count(*)::int AS n FROM event_receipts WHERE consumer_group = ${kafkaGroup(group)} AND event_id = ANY(${sql.array(ids, 'uuid')})
`);

it('Subscribe: a group streamed through two gateways receives each event through exactly one of them, once', async () => {
  const group = groupName();
  const [clientA, clientB] = gateways.map((gateway) => eventServiceClient(gateway));
  grpcClients.push(clientA, clientB);
  const a = subscribe(clientA, { topic: AUTH, group_id: group }, alice.accessToken);
  streams.push(a);
  await untilGroupExists(group);
  const b = subscribe(clientB, { topic: AUTH, group_id: group }, alice.accessToken);
  streams.push(b);
  await untilMembers(group, 2);

  const published = await publishUsers(60);
  const ofTest = (ids: readonly string[]) => ids.filter((id) => published.includes(id));
  await waitFor('every event through one of the gateways', async () => {
    const seen = new Set([...a.events, ...b.events].map((event) => event.id));
    return published.every((id) => seen.has(id));
  }, 60_000, 100);
  // Receipts are claimed once an event was written to its stream: wait for them, so nothing is still in hand.
  await waitFor('every delivery settled', async () => await receipts(group, published) === published.length, 30_000, 100);

  const [throughA, throughB] = [ofTest(a.events.map((event) => event.id)), ofTest(b.events.map((event) => event.id))];
  // Both gateways served the group, neither streamed an event the other did, and none came twice.
  expect(throughA.length).toBeGreaterThan(0);
  expect(throughB.length).toBeGreaterThan(0);
  expect(throughA.filter((id) => throughB.includes(id))).toEqual([]);
  expect([...copiesById([...a.events, ...b.events].map((event) => event.id))].filter(([, n]) => n !== 1)).toEqual([]);
  expect(new Set([...throughA, ...throughB])).toEqual(new Set(published));
  // No rebalance happened meanwhile that could have handed a partition over.
  expect(await describeGroup(admin, kafkaGroup(group))).toEqual({ state: 'Stable', members: 2 });
});

it('Consume: each event is handled and acknowledged through one gateway; when a subscriber leaves, the other takes the rest and nothing acknowledged comes again', async () => {
  const group = groupName();
  const handled: [string[], string[]] = [[], []];
  const [busA, busB] = gateways.map((gateway) => new EventBusClient({ address: gateway.grpcAddress, token: () => alice.accessToken }));
  buses.push(busA, busB);
  const subA = busA.subscribe(['auth.user.created'], async (event) => { handled[0].push(event.id); }, { group });
  await untilGroupExists(group);
  const subB = busB.subscribe(['auth.user.created'], async (event) => { handled[1].push(event.id); }, { group });
  try {
    await untilMembers(group, 2);

    const first = await publishUsers(40);
    await waitFor('the first events handled', async () => first.every((id) => handled[0].includes(id) || handled[1].includes(id)), 60_000, 100);
    await waitFor('their acknowledgements received', async () => await receipts(group, first) === first.length, 30_000, 100);
    expect(first.filter((id) => handled[0].includes(id)).length).toBeGreaterThan(0);
    expect(first.filter((id) => handled[1].includes(id)).length).toBeGreaterThan(0);
    expect(first.filter((id) => handled[0].includes(id) && handled[1].includes(id))).toEqual([]);

    // A's subscriber leaves; its partitions go to B's member on the other gateway.
    subA.close();
    await subA.closed;
    await untilMembers(group, 1);
    const handledByA = handled[0].length;
    const second = await publishUsers(40);
    await waitFor('the rest handled through the other gateway', async () => second.every((id) => handled[1].includes(id)), 90_000, 100);
    await waitFor('their acknowledgements received', async () => await receipts(group, second) === second.length, 30_000, 100);

    expect(handled[0]).toHaveLength(handledByA);
    // Every event handled exactly once over both subscribers: B read A's partitions from where A's
    // acknowledgements left them, and no event A had acknowledged came to B.
    const all = [...first, ...second];
    const copies = copiesById([...handled[0], ...handled[1]].filter((id) => all.includes(id)));
    expect(new Set(copies.keys())).toEqual(new Set(all));
    expect([...copies].filter(([, n]) => n !== 1)).toEqual([]);
  } finally {
    subA.close();
    subB.close();
    await Promise.allSettled([subA.closed, subB.closed]);
  }
});
