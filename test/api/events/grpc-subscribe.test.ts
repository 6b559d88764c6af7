import { status, type Client } from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { createOrderedProducer, type Admin, type Producer } from '../../../common/kafka';
import { committedOffsets, setGroupOffsets, topicBounds } from '../../../common/kafka-groups';
import { newId } from '../../../common/ids';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { kafkaGroupId } from '../../../services/events/consumers/group-names';
import { topics } from '../../../services/events/topics';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { eventServiceClient, failure, subscribe, unary, type OpenSubscription, type StreamedEvent } from '../../helpers/grpc';
import { call, waitFor } from '../../helpers/http';
import { registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { closedPort, ensureCatalogueTopics, publishAuthEvent, testKafka } from '../../helpers/kafka';
import { installModule } from '../../helpers/modules';
import { addMember } from '../../helpers/rbac';

/**
 * The consumer-group RPCs of the gRPC EventService (docs/reference/events.md, rules 13 to 22): Subscribe, Unsubscribe, ReplayFrom
 * and GetConsumerPosition through a real @grpc/grpc-js client against the test gateway, Kafka and
 * PostgreSQL, with every status they answer; tenants' groups of one name kept apart; the lag gauges
 * of /metrics. The module crm subscribes to auth.user.created (platform.auth.events); the tests
 * publish that topic's events straight to Kafka, as the identity service's relay would.
 */

const AUTH: string = topics.auth.name;

let gateway: TestGateway;
let owner: DatabasePool;
let client: Client;
let producer: Producer;
let admin: Admin;
/** Two tenants with crm installed, and one without. */
let alice: RegisteredAccount;
let bob: RegisteredAccount;
let bare: RegisteredAccount;
/** A member of alice's tenant: no events.subscribe. */
let member: { token: string };
const open: OpenSubscription[] = [];

beforeAll(async () => {
  await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics()]);
  [gateway, owner] = await Promise.all([
    // Lag is sampled every second here, so a test sees /metrics move.
    startTestGateway({ env: { EVENTS_LAG_SAMPLE_MS: '1000' } }),
    createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'events-grpc-subscribe' }),
  ]);
  client = eventServiceClient(gateway);
  producer = createOrderedProducer(testKafka());
  admin = testKafka().admin();
  await Promise.all([producer.connect(), admin.connect()]);
  [alice, bob, bare] = await Promise.all([registerAccount(gateway), registerAccount(gateway), registerAccount(gateway)]);
  for (const account of [alice, bob]) expect((await installModule(gateway, account.accessToken, 'crm')).status).toBe(201);
  member = await addMember(gateway, owner, alice.tenant.id);
}, 60_000);

afterEach(() => {
  for (const stream of open.splice(0)) stream.cancel();
});

afterAll(async () => {
  client?.close();
  await gateway?.close();
  await Promise.allSettled([producer?.disconnect(), admin?.disconnect(), owner?.end()]);
});

const groupName = (label = 'h') => `crm.${label}-${randomBytes(4).toString('hex')}`;

const publishAuth = (tenantId: string, type?: string, userId?: string) => publishAuthEvent(producer, tenantId, type, userId);

interface Position { current_offset: string; latest_offset: string; lag: string }
const position = (group: string, token = alice.accessToken, topic = AUTH) =>
  unary<Position>(client, 'GetConsumerPosition', { topic, group_id: group }, token);

/** Opens a Subscribe stream and waits until its group exists (its start offsets are committed), so what is published next reaches it. */
async function subscribed(group: string, token = alice.accessToken, topic = AUTH): Promise<OpenSubscription> {
  const stream = subscribe(client, { topic, group_id: group }, token);
  open.push(stream);
  await waitFor(`group ${group} to exist`, async () => (await position(group, token, topic)) !== undefined, 15_000, 100);
  return stream;
}

const idsOf = (events: readonly StreamedEvent[]) => events.map((event) => event.id);
const timestampOf = (ms: number) => ({ seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 });

describe('Subscribe', () => {
  it('streams the tenant’s events of the types its module subscribes to, as wire Events', async () => {
    const group = groupName();
    const stream = await subscribed(group);
    // One user's events share a partition, so the marker comes after the other two (order is per entity only).
    const user = newId();
    const created = await publishAuth(alice.tenant.id, 'auth.user.created', user);
    const updated = await publishAuth(alice.tenant.id, 'auth.user.updated', user);
    const marker = await publishAuth(alice.tenant.id, 'auth.user.created', user);
    const events = await stream.waitFor((seen) => seen.some((event) => event.id === marker));
    expect(idsOf(events)).toEqual(expect.arrayContaining([created, marker]));
    // crm's manifest subscribes to auth.user.created only.
    expect(idsOf(events)).not.toContain(updated);
    const event = events.find((e) => e.id === created)!;
    expect(event).toMatchObject({
      type: 'auth.user.created', source: 'identity', tenant_id: alice.tenant.id, schema_version: '1.0.0', trace_id: 'ab'.repeat(16),
      timestamp: { seconds: expect.stringMatching(/^\d+$/), nanos: expect.any(Number) },
    });
    expect(JSON.parse(event.data.toString('utf8'))).toMatchObject({ tenant_id: alice.tenant.id, display_name: 'Ada' });
  });

  it('keeps two tenants’ groups of one name apart: neither sees the other’s events, each has its own offsets', async () => {
    const group = groupName('shared');
    const [ours, theirs] = [await subscribed(group, alice.accessToken), await subscribed(group, bob.accessToken)];
    const aliceIds = [await publishAuth(alice.tenant.id), await publishAuth(alice.tenant.id)];
    const bobIds = [await publishAuth(bob.tenant.id), await publishAuth(bob.tenant.id)];
    const [mine, bobs] = await Promise.all([
      ours.waitFor((seen) => aliceIds.every((id) => idsOf(seen).includes(id))),
      theirs.waitFor((seen) => bobIds.every((id) => idsOf(seen).includes(id))),
    ]);
    expect(mine.every((event) => event.tenant_id === alice.tenant.id)).toBe(true);
    expect(bobs.every((event) => event.tenant_id === bob.tenant.id)).toBe(true);
    expect(idsOf(mine)).not.toEqual(expect.arrayContaining([bobIds[0]]));
    expect(idsOf(bobs)).not.toEqual(expect.arrayContaining([aliceIds[0]]));
    const [aliceGroup, bobGroup] = [kafkaGroupId(group, alice.tenant.id), kafkaGroupId(group, bob.tenant.id)];
    expect(aliceGroup).not.toBe(bobGroup);
    expect((await committedOffsets(admin, aliceGroup, AUTH)).length).toBeGreaterThan(0);
    expect((await committedOffsets(admin, bobGroup, AUTH)).length).toBeGreaterThan(0);
  });

  it('is UNAUTHENTICATED, PERMISSION_DENIED without events.subscribe, NOT_FOUND for an unknown topic, INVALID_ARGUMENT for a bad group', async () => {
    const attempt = async (request: { topic: string; group_id: string }, token: string | null) => subscribe(client, request, token).ended;
    expect(await attempt({ topic: AUTH, group_id: groupName() }, null)).toMatchObject({ code: status.UNAUTHENTICATED });
    expect(await attempt({ topic: AUTH, group_id: groupName() }, member.token))
      .toEqual({ code: status.PERMISSION_DENIED, details: 'The permission events.subscribe is required', problem: 'forbidden' });
    expect(await attempt({ topic: 'platform.nothing.events', group_id: groupName() }, alice.accessToken))
      .toEqual({ code: status.NOT_FOUND, details: 'The topic platform.nothing.events was not found', problem: 'not-found' });
    for (const bad of ['', 'crm', 'Crm.handler', 'crm.', '.handler', 'crm handler.x']) {
      expect(await attempt({ topic: AUTH, group_id: bad }, alice.accessToken)).toMatchObject({ code: status.INVALID_ARGUMENT, problem: 'validation-error' });
    }
  });

  it('is PERMISSION_DENIED event-subscribe-not-declared for a topic the module declares no type of, an unknown module, a module not installed', async () => {
    const attempt = async (topic: string, group: string, token = alice.accessToken) => subscribe(client, { topic, group_id: group }, token).ended;
    expect(await attempt(topics.data.name, groupName())).toEqual({
      code: status.PERMISSION_DENIED, problem: 'event-subscribe-not-declared',
      details: `Module crm may not subscribe to ${topics.data.name}: its manifest declares no type of ${topics.data.name} in events.subscribes`,
    });
    expect(await attempt(AUTH, 'nothing.handler')).toMatchObject({ code: status.PERMISSION_DENIED, problem: 'event-subscribe-not-declared' });
    expect(await attempt(AUTH, groupName(), bare.accessToken)).toMatchObject({
      code: status.PERMISSION_DENIED, problem: 'event-subscribe-not-declared', details: expect.stringContaining('not installed'),
    });
  });

  it('is FAILED_PRECONDITION for a group that reads another topic', async () => {
    const group = groupName();
    const bounds = await topicBounds(admin, topics.data.name);
    await setGroupOffsets(testKafka(), kafkaGroupId(group, alice.tenant.id), topics.data.name, bounds.map(({ partition, high }) => ({ partition, offset: high })));
    expect(await subscribe(client, { topic: AUTH, group_id: group }, alice.accessToken).ended)
      .toMatchObject({ code: status.FAILED_PRECONDITION, problem: 'consumer-group-conflict', details: expect.stringContaining(topics.data.name) });
  });
});

describe('GetConsumerPosition', () => {
  it('gives the committed and latest offsets summed over partitions, and their difference as lag', async () => {
    const group = groupName();
    const stream = await subscribed(group);
    const received = await publishAuth(alice.tenant.id);
    await stream.waitFor((seen) => idsOf(seen).includes(received));
    stream.cancel();
    await stream.ended;
    const kafkaGroup = kafkaGroupId(group, alice.tenant.id);
    // The stream is gone: the group's committed offsets stay put while two more events arrive.
    await waitFor('the stream’s consumer to leave', async () => (await admin.describeGroups([kafkaGroup])).groups[0].members.length === 0, 15_000);
    await publishAuth(alice.tenant.id);
    await publishAuth(alice.tenant.id);
    const committed = (await committedOffsets(admin, kafkaGroup, AUTH)).reduce((sum, { offset }) => sum + offset, 0n);
    const latestBefore = (await topicBounds(admin, AUTH)).reduce((sum, { high }) => sum + high, 0n);
    const answer = await position(group);
    expect(BigInt(answer.current_offset)).toBe(committed);
    expect(BigInt(answer.latest_offset)).toBeGreaterThanOrEqual(latestBefore);
    expect(BigInt(answer.lag)).toBe(BigInt(answer.latest_offset) - BigInt(answer.current_offset));
    expect(BigInt(answer.lag)).toBeGreaterThanOrEqual(2n);
  });

  it('is NOT_FOUND for a group that does not exist or belongs to another tenant, and checks like Subscribe', async () => {
    const group = groupName();
    await subscribed(group);
    expect(await failure(position(groupName()))).toMatchObject({ code: status.NOT_FOUND });
    expect(await failure(position(group, bob.accessToken))).toMatchObject({ code: status.NOT_FOUND });
    expect(await failure(position(group, alice.accessToken, 'platform.nothing.events'))).toMatchObject({ code: status.NOT_FOUND });
    expect(await failure(position('Bad', alice.accessToken))).toMatchObject({ code: status.INVALID_ARGUMENT });
    expect(await failure(position(group, member.token))).toMatchObject({ code: status.PERMISSION_DENIED });
    expect(await failure(position(group, 'a.b.c'))).toMatchObject({ code: status.UNAUTHENTICATED });
  });
});

describe('Unsubscribe', () => {
  it('ends the group’s open streams with OK and deletes its offsets: a later Subscribe starts afresh', async () => {
    const group = groupName();
    const [first, second] = [await subscribed(group), await subscribed(group)];
    expect(await unary(client, 'Unsubscribe', { topic: AUTH, group_id: group }, alice.accessToken)).toEqual({});
    expect(await first.ended).toMatchObject({ code: status.OK });
    expect(await second.ended).toMatchObject({ code: status.OK });
    expect(await committedOffsets(admin, kafkaGroupId(group, alice.tenant.id), AUTH)).toEqual([]);
    expect(await failure(position(group))).toMatchObject({ code: status.NOT_FOUND });

    // Published while the group did not exist: the new group starts after it.
    const missed = await publishAuth(alice.tenant.id);
    const again = await subscribed(group);
    const marker = await publishAuth(alice.tenant.id);
    const events = await again.waitFor((seen) => idsOf(seen).includes(marker));
    expect(idsOf(events)).not.toContain(missed);
  });

  it('is NOT_FOUND for an unknown group and another tenant’s group, whose stream stays open', async () => {
    const group = groupName();
    const stream = await subscribed(group);
    expect(await failure(unary(client, 'Unsubscribe', { topic: AUTH, group_id: groupName() }, alice.accessToken))).toMatchObject({ code: status.NOT_FOUND });
    expect(await failure(unary(client, 'Unsubscribe', { topic: AUTH, group_id: group }, bob.accessToken))).toMatchObject({ code: status.NOT_FOUND });
    expect(await failure(unary(client, 'Unsubscribe', { topic: topics.files.name, group_id: group }, alice.accessToken))).toMatchObject({ code: status.NOT_FOUND });
    const marker = await publishAuth(alice.tenant.id);
    await stream.waitFor((seen) => idsOf(seen).includes(marker));
  });

  it('is UNAUTHENTICATED, PERMISSION_DENIED, NOT_FOUND for an unknown topic and INVALID_ARGUMENT for a bad group', async () => {
    const request = { topic: AUTH, group_id: groupName() };
    expect(await failure(unary(client, 'Unsubscribe', request, null))).toMatchObject({ code: status.UNAUTHENTICATED });
    expect(await failure(unary(client, 'Unsubscribe', request, member.token))).toMatchObject({ code: status.PERMISSION_DENIED });
    expect(await failure(unary(client, 'Unsubscribe', { ...request, topic: 'platform.nothing.events' }, alice.accessToken))).toMatchObject({ code: status.NOT_FOUND });
    expect(await failure(unary(client, 'Unsubscribe', { ...request, group_id: 'crm' }, alice.accessToken))).toMatchObject({ code: status.INVALID_ARGUMENT });
  });
});

describe('ReplayFrom', () => {
  it('moves the group back: events it never received are delivered, those it received are dropped by de-duplication', async () => {
    const group = groupName();
    // One partition for the three events, so the marker arrives after the other two.
    const user = newId();
    const from = Date.now() - 1000;
    const beforeGroup = await publishAuth(alice.tenant.id, 'auth.user.created', user);
    const stream = await subscribed(group);
    const received = await publishAuth(alice.tenant.id, 'auth.user.created', user);
    await stream.waitFor((seen) => idsOf(seen).includes(received));
    expect(idsOf(stream.events)).not.toContain(beforeGroup);

    const { message } = await unary<{ message: string }>(client, 'ReplayFrom', { topic: AUTH, group_id: group, from_timestamp: timestampOf(from) }, alice.accessToken);
    expect(message).toContain(`Consumer group ${group} reads ${AUTH} again from ${new Date(from).toISOString()}`);
    expect(message).toContain('1 open stream of the group in this gateway ended (OK)');
    expect(message).toContain('dropped by de-duplication');
    // The open stream was ended so that Kafka let the group move.
    expect(await stream.ended).toMatchObject({ code: status.OK });
    expect(BigInt((await position(group)).lag)).toBeGreaterThanOrEqual(2n);

    const replayed = await subscribed(group);
    const marker = await publishAuth(alice.tenant.id, 'auth.user.created', user);
    const events = await replayed.waitFor((seen) => idsOf(seen).includes(marker));
    expect(idsOf(events)).toContain(beforeGroup);
    expect(idsOf(events)).not.toContain(received);
  });

  it('is OUT_OF_RANGE before the topic’s retention or in the future', async () => {
    const group = groupName();
    await subscribed(group);
    const hour = 3_600_000;
    const replay = (ms: number, topic = AUTH) => unary(client, 'ReplayFrom', { topic, group_id: group, from_timestamp: timestampOf(ms) }, alice.accessToken);
    const tooOld = await failure(replay(Date.now() - (gateway.config.kafka.retentionHours + 1) * hour));
    expect(tooOld).toMatchObject({ code: status.OUT_OF_RANGE, problem: 'replay-out-of-range' });
    expect(tooOld.details).toContain(`older than the ${gateway.config.kafka.retentionHours} h retention of ${AUTH}`);
    expect(await failure(replay(Date.now() + hour))).toMatchObject({ code: status.OUT_OF_RANGE, details: expect.stringContaining('in the future') });
    // The audit topic keeps 30 days: 8 days back is inside it (and the group has never read it: NOT_FOUND).
    expect(await failure(replay(Date.now() - 8 * 24 * hour, topics.audit.name))).toMatchObject({ code: status.NOT_FOUND });
  });

  it('is NOT_FOUND for an unknown topic or a group that never committed on it, and checks like the other RPCs', async () => {
    const request = { topic: AUTH, group_id: groupName(), from_timestamp: timestampOf(Date.now() - 60_000) };
    expect(await failure(unary(client, 'ReplayFrom', request, alice.accessToken))).toMatchObject({ code: status.NOT_FOUND });
    expect(await failure(unary(client, 'ReplayFrom', { ...request, topic: 'platform.nothing.events' }, alice.accessToken)))
      .toMatchObject({ code: status.NOT_FOUND, details: 'The topic platform.nothing.events was not found' });
    expect(await failure(unary(client, 'ReplayFrom', { topic: AUTH, group_id: request.group_id }, alice.accessToken)))
      .toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringContaining('from_timestamp REQUIRED') });
    expect(await failure(unary(client, 'ReplayFrom', { ...request, group_id: 'crm' }, alice.accessToken))).toMatchObject({ code: status.INVALID_ARGUMENT });
    expect(await failure(unary(client, 'ReplayFrom', request, member.token))).toMatchObject({ code: status.PERMISSION_DENIED });
    expect(await failure(unary(client, 'ReplayFrom', request, null))).toMatchObject({ code: status.UNAUTHENTICATED });
  });
});

describe('a broker that is down', () => {
  it('makes the four RPCs UNAVAILABLE', async () => {
    const down = await startTestGateway({ env: { KAFKA_BROKERS: `127.0.0.1:${await closedPort()}` } });
    const downClient = eventServiceClient(down);
    try {
      const request = { topic: AUTH, group_id: groupName() };
      expect(await subscribe(downClient, request, alice.accessToken).ended).toMatchObject({ code: status.UNAVAILABLE, problem: 'service-unavailable' });
      for (const [method, extra] of [['GetConsumerPosition', {}], ['Unsubscribe', {}], ['ReplayFrom', { from_timestamp: timestampOf(Date.now() - 60_000) }]] as const) {
        expect(await failure(unary(downClient, method, { ...request, ...extra }, alice.accessToken))).toMatchObject({ code: status.UNAVAILABLE });
      }
    } finally {
      downClient.close();
      await down.close();
    }
  }, 60_000);
});

describe('/metrics', () => {
  it('shows the lag in messages, its age and alert level of each streamed group and of the platform’s groups', async () => {
    const group = groupName();
    await subscribed(group);
    const line = (name: string) => new RegExp(`^${name}\\{group="${group}",tenant="${alice.tenant.id}",topic="${AUTH}"\\} (\\d+)$`, 'm');
    await waitFor('the lag gauges of the group', async () => line('event_consumer_lag_messages').test((await call<string>(`${gateway.baseUrl}/metrics`)).body), 15_000);
    const metrics = (await call<string>(`${gateway.baseUrl}/metrics`)).body;
    expect(metrics).toMatch(line('event_consumer_lag_age_seconds'));
    expect(line('event_consumer_lag_alert_level').exec(metrics)?.[1]).toBe('0');
    expect(line('event_consumer_lag_alert_suppressed').exec(metrics)?.[1]).toBe('0');
    // crm's subscriber, run by the worker for every tenant: the platform group crm.user-created.
    expect(metrics).toMatch(new RegExp(`^event_consumer_lag_messages\\{group="crm.user-created",tenant="",topic="${AUTH}"\\} \\d+$`, 'm'));
  });
  it('shows how many partitions of streams follow the gateway\'s one fetch of their topic', async () => {
    const stream = await subscribed(groupName());
    const followers = async () => Number(/^event_topic_tail_followers\{topic="platform.auth.events"\} (\d+)$/m.exec((await call<string>(`${gateway.baseUrl}/metrics`)).body)?.[1] ?? 0);
    // A partition follows once the stream has handled a batch of it that the tail holds too: traffic brings both.
    await waitFor('a partition of the stream following the tail', async () => {
      await publishAuth(alice.tenant.id);
      return (await followers()) > 0;
    }, 30_000, 200);
    expect(stream.events.length).toBeGreaterThan(0);
  });
});
