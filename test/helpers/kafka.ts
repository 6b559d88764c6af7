import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { config } from '../../common/config';
import { EVENT_HEADERS, decodeEvent, encodeEvent, headerValue, type DecodedEvent } from '../../services/events/envelope';
import { topics } from '../../services/events/topics';
import { createConsumer, createKafka, sendInOrder, type Producer } from '../../common/kafka';
import { newId } from '../../common/ids';
import { ensureTopics, plannedTopics } from '../../workers/topics';

/**
 * Kafka for integration tests. The broker is shared by every test (and every engineer), so a test
 * reads with a fresh consumer group from the earliest offset and keeps only its own tenant's events,
 * picked by the tenantId header.
 */

export const testKafka = () => createKafka(config().kafka);

let topicsReady: Promise<unknown> | undefined;

type StartOffsets = ReadonlyMap<string, ReadonlyArray<{ partition: number; offset: bigint }>>;

/** The end of every catalogue topic when this test file made sure of them: its own tenants' events all come later. */
let fileStart: StartOffsets | undefined;

/**
 * The broker does not create topics on first use: make sure the catalogue exists, once per file, and note
 * where each topic ends, so consumeTenantEvents reads only what came after (the shared broker's topics keep
 * every earlier run's and benchmark's events for a week).
 */
export function ensureCatalogueTopics(): Promise<unknown> {
  topicsReady ??= (async () => {
    const admin = testKafka().admin();
    await admin.connect();
    try {
      const planned = plannedTopics(config().kafka);
      const ensured = await ensureTopics(admin, planned);
      fileStart = new Map(await Promise.all(planned.map(async ({ name }) => [
        name, (await admin.fetchTopicOffsets(name)).map(({ partition, high }) => ({ partition, offset: BigInt(high) })),
      ] as const)));
      return ensured;
    } finally {
      await admin.disconnect();
    }
  })();
  return topicsReady;
}

export interface ReceivedEvent extends DecodedEvent {
  topic: string;
  partition: number;
  offset: number;
  headers: Record<string, string>;
}

export interface ConsumeOptions {
  tenantId: string;
  topics: readonly string[];
  /** Reading stops as soon as this holds for the events received so far. */
  until: (events: readonly ReceivedEvent[]) => boolean;
  timeoutMs?: number;
  /**
   * Where to start reading each topic's partitions (offsets taken before the test published). By default
   * where the topics ended when the file called ensureCatalogueTopics, else the oldest retained event.
   */
  from?: StartOffsets;
}

/**
 * Reads the tenant's events, in the order of each partition, until `until` holds. Rejects after
 * timeoutMs naming how many events had arrived, so a missing event fails the test instead of
 * hanging it.
 */
export async function consumeTenantEvents({ tenantId, topics, until, timeoutMs = 20_000, from }: ConsumeOptions): Promise<ReceivedEvent[]> {
  const consumer = createConsumer(testKafka(), { groupId: `test.${randomUUID()}`, maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
  const events: ReceivedEvent[] = [];
  let timer: NodeJS.Timeout | undefined;
  try {
    await consumer.connect();
    for (const topic of topics) await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms with ${events.length} event(s) of tenant ${tenantId}`)), timeoutMs);
      consumer.run({
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }) => {
          if (headerValue(message, EVENT_HEADERS.tenantId) !== tenantId) return;
          const headers = Object.fromEntries(Object.keys(message.headers ?? {}).map((name) => [name, headerValue(message, name)!]));
          events.push({ ...decodeEvent(message), topic, partition, offset: Number(message.offset), headers });
          if (until(events)) resolve();
        },
      }).then(() => {
        for (const topic of topics) {
          for (const { partition, offset } of (from ?? fileStart)?.get(topic) ?? []) consumer.seek({ topic, partition, offset: offset.toString() });
        }
      }, reject);
    });
    return events;
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
}

/** A port of 127.0.0.1 nothing listens on: a broker there refuses every connection (a Kafka that is down). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Publishes an auth event of the tenant to platform.auth.events, as the identity service's relay
 * does (keyed by the user, so one user's events keep their order; `key` puts events of several
 * users on one partition); returns its id.
 */
export async function publishAuthEvent(
  producer: Producer, tenantId: string, type = 'auth.user.created', userId = newId(), key = userId,
): Promise<string> {
  const id = newId();
  const envelope = {
    id, type, source: 'identity', tenantId, schemaVersion: '1.0.0', timestamp: new Date().toISOString(), traceId: 'ab'.repeat(16),
    data: { user_id: userId, email: `${userId}@example.com`, display_name: 'Ada', role: 'member', tenant_id: tenantId },
  };
  await sendInOrder(producer, [encodeEvent({ topic: topics.auth.name, key, envelope, correlationId: null })]);
  return id;
}
