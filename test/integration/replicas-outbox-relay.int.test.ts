import { Client } from 'pg';
import { z } from 'zod';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import type { Admin, Kafka } from '../../common/kafka';
import { setGroupOffsets, topicBounds, type PartitionBounds } from '../../common/kafka-groups';
import { pgSsl } from '../../db/pg-ssl';
import { sql } from '../../db/pool';
import { GroupConsumer } from '../../services/events/consumers/group-consumer';
import { enqueueEvent, type EventInput } from '../../services/events/publish';
import { topics } from '../../services/events/topics';
import { createAuditDatabase, eventually, quietLogger, type AuditDatabase } from '../helpers/audit';
import { createEffectsTable, effectsOf, testConsumerSettings, writeEffect } from '../helpers/consumer-groups';
import { ensureCatalogueTopics, testKafka } from '../helpers/kafka';
import { copiesById, readTopicRange, spawnReplica, type ReplicaProcess } from '../helpers/replica-processes';

/**
 * Two outbox relays at once, as the platform runs them (docs/decisions/events.md, Outbox relay): each
 * a process of its own (workers/outbox-relay.ts from source, its own pool, session and producer) on a
 * scratch database, whose leader lock is the relays' only coordination. test/integration/outbox-relay.int.test.ts
 * proves the election and a takeover with one row; this file counts every copy on Kafka of a batch of
 * rows: while both run each row leaves exactly once, and a leader killed between Kafka's
 * acknowledgement of a batch and its marking loses nothing — the standby publishes that batch again
 * (at least once, as the relay promises) and nothing else twice, and a consumer group takes each event once.
 */

jest.setTimeout(240_000);

const LEADER = 'relay is the leader; publishing';
const STANDBY = 'another relay is the leader; standing by';
const BATCH_SIZE = 50;
const DATA = topics.data.name;
/** The relays' leader lock (db/queries/events/outbox-relay.queries.ts). */
const RELAY_LOCK = "hashtextextended('platform:outbox-relay', 0)";

let db: AuditDatabase;
let kafka: Kafka;
let admin: Admin;
const relays: ReplicaProcess[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  [db] = await Promise.all([createAuditDatabase('platform_replicas_relay_test'), ensureCatalogueTopics()]);
  await createEffectsTable(db.owner);
  kafka = testKafka();
  admin = kafka.admin();
  await admin.connect();
});

afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.stop('SIGKILL')));
  await Promise.all(clients.splice(0).map((client) => client.end().catch(() => undefined)));
});

afterAll(async () => {
  await admin?.disconnect();
  await db?.close();
});

/** A relay process on the scratch database, batches of 50. */
function startRelay(): ReplicaProcess {
  const relay = spawnReplica('workers/outbox-relay.ts', [], {
    DATABASE_OWNER_URL: db.ownerUrl, OUTBOX_BATCH_SIZE: String(BATCH_SIZE), OUTBOX_IDLE_POLL_MS: '100', OUTBOX_LINGER_MS: '10',
  });
  relays.push(relay);
  return relay;
}

/** A plain session of the owner role, for the locks the test holds itself. */
async function session(): Promise<Client> {
  const client = new Client({ connectionString: db.ownerUrl, ssl: pgSsl(config().db.ssl) });
  clients.push(client);
  await client.connect();
  return client;
}

/** `count` contact events of the tenant over seven keys, numbered from `from` in data.n, in one transaction. */
function write(tenantId: string, count: number, from: number): Promise<string[]> {
  const events: EventInput[] = Array.from({ length: count }, (_, i) => ({
    tenantId, type: 'crm.contact.updated', source: 'crm', key: `contact-${(from + i) % 7}`, data: { n: from + i },
  }));
  return db.owner.transaction(async (tx) => {
    const ids: string[] = [];
    for (const event of events) ids.push(await enqueueEvent(tx, event));
    return ids;
  });
}

const pendingOf = (tenantId: string) => db.owner.oneFirst(sql.type(z.object({ n: z.number() }))`
  SELECT count(*)::int AS n FROM outbox_events WHERE tenant_id = ${tenantId} AND published_at IS NULL
`);
const seqOf = (id: string) => db.owner.oneFirst(sql.type(z.object({ seq: z.number() }))`SELECT seq FROM outbox_events WHERE id = ${id}`);
const dataTopicEnd = (): Promise<PartitionBounds[]> => topicBounds(admin, DATA);

it('publishes each of 200 rows written while two relays run exactly once, from the leader alone', async () => {
  const leader = startRelay();
  await leader.log.waitForMessage(LEADER);
  const standby = startRelay();
  await standby.log.waitForMessage(STANDBY);

  const tenantId = newId();
  const from = await dataTopicEnd();
  const written: string[] = [];
  for (let t = 0; t < 8; t += 1) written.push(...await write(tenantId, 25, t * 25));
  // A row is marked only after Kafka acknowledged it: once none is pending, every copy is on the topic.
  await eventually(async () => await pendingOf(tenantId) === 0, 'every row marked published', 60_000);
  const events = await readTopicRange({ kafka, topic: DATA, from, to: await dataTopicEnd(), tenantId });

  const copies = copiesById(events.map((event) => event.envelope.id));
  expect(new Set(copies.keys())).toEqual(new Set(written));
  expect([...copies].filter(([, n]) => n !== 1)).toEqual([]);
  // The standby neither published nor did the leader's housekeeping (status and deletion of old rows).
  expect(standby.log.lines.map((line) => line.msg).filter((msg) => msg !== STANDBY && msg !== undefined)).toEqual([]);
  expect(leader.log.all('outbox status').length).toBeGreaterThan(0);

  expect(await Promise.all([leader.stop('SIGTERM'), standby.stop('SIGTERM')])).toEqual([0, 0]);
});

it('loses no row when the leader is SIGKILLed between Kafka\'s acknowledgement of a batch and its marking: the standby sends that batch again and nothing else twice', async () => {
  const tenantId = newId();
  // The test holds the leader lock while the rows are written, so both relays start as standbys and
  // the batches are cut from the 1 000 rows in seq order: rows 300..349 are the seventh.
  const election = await session();
  await election.query(`SELECT pg_advisory_lock(${RELAY_LOCK})`);
  const both = [startRelay(), startRelay()];
  await Promise.all(both.map((relay) => relay.log.waitForMessage(STANDBY)));

  const from = await dataTopicEnd();
  const written: string[] = [];
  for (let t = 0; t < 10; t += 1) written.push(...await write(tenantId, 100, t * 100));
  const inFlight = written.slice(300, 350);
  // A row of the seventh batch locked by the test: the leader publishes that batch, Kafka acknowledges
  // it, and its marking (UPDATE … published_at) waits for this lock, however fast the machine.
  const rowLock = await session();
  await rowLock.query('BEGIN');
  await rowLock.query('SELECT 1 FROM outbox_events WHERE seq = $1 FOR UPDATE', [await seqOf(written[320])]);
  await election.query(`SELECT pg_advisory_unlock(${RELAY_LOCK})`);

  const leader = await Promise.race(both.map((relay) => relay.log.waitForMessage(LEADER).then(() => relay)));
  const standby = both.find((relay) => relay !== leader)!;
  let marking: number | undefined;
  await eventually(async () => {
    marking = (await db.owner.maybeOneFirst(sql.type(z.object({ pid: z.number() }))`
      SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE outbox_events SET published_at%'
    `)) ?? undefined;
    return marking !== undefined;
  }, 'the leader marking the seventh batch, waiting for the row lock', 60_000);
  // Six batches were acknowledged and marked before it.
  expect(leader.log.all('published batch').map((line) => line.batchSize)).toEqual([50, 50, 50, 50, 50, 50]);

  expect(await leader.stop('SIGKILL')).toBe('SIGKILL');
  // The killed process's session ends with its marking undone, as it does when the kill lands between the
  // acknowledgement and the UPDATE (here the backend waits on a lock and would not notice its client is gone).
  await election.query('SELECT pg_terminate_backend($1)', [marking]);
  await rowLock.query('ROLLBACK');

  await standby.log.waitForMessage(LEADER);
  await eventually(async () => await pendingOf(tenantId) === 0, 'every row marked published by the new leader', 60_000);
  const events = await readTopicRange({ kafka, topic: DATA, from, to: await dataTopicEnd(), tenantId });

  // None lost; the batch in flight at the kill twice, every other row once.
  const copies = copiesById(events.map((event) => event.envelope.id));
  expect(new Set(copies.keys())).toEqual(new Set(written));
  expect(written.filter((id) => copies.get(id) !== 1)).toEqual(inFlight);
  expect(inFlight.map((id) => copies.get(id))).toEqual(inFlight.map(() => 2));

  // Downstream, a consumer group de-duplicates by event id (the relay's promise leans on it): each event
  // takes effect once, the copies are counted as duplicates, and each key's events in their order.
  const groupId = `test.relay-handover-${newId().slice(-8)}`;
  await setGroupOffsets(kafka, groupId, DATA, from.map(({ partition, high }) => ({ partition, offset: high })));
  const consumer = new GroupConsumer({
    kafka, db: db.app, logger: quietLogger(), groupId, topic: DATA, tenantId, accepts: () => true, fromBeginning: false,
    settings: testConsumerSettings, partitionsConcurrently: 3,
    handler: { kind: 'transactional', handle: (delivery, tx) => writeEffect(tx, groupId, delivery) },
  });
  await consumer.start();
  try {
    await eventually(async () => consumer.status().handled + consumer.status().duplicate >= events.length, 'every copy consumed', 90_000);
    expect(consumer.status()).toMatchObject({ handled: written.length, duplicate: inFlight.length, 'dead-lettered': 0 });
    const effects = await effectsOf(db.owner, groupId);
    expect(effects.map((effect) => effect.eventId).sort()).toEqual([...written].sort());
    for (let key = 0; key < 7; key += 1) {
      const ns = effects.filter((effect) => effect.eventKey === `contact-${key}`).map((effect) => effect.n);
      expect(ns).toEqual([...ns].sort((a, b) => a - b));
    }
  } finally {
    await consumer.stop();
  }

  expect(await standby.stop('SIGTERM')).toBe(0);
});
