import { Metadata, status, type Client, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { newId } from '../../common/ids';
import { createOrderedProducer, sendInOrder, type Kafka, type OutgoingRecord } from '../../common/kafka';
import { unaryCall } from '../../common/proto';
import { encodeEvent } from '../../services/events/envelope';
import { topics, type TopicName } from '../../services/events/topics';
import { openLoop, percentile } from './load';

/**
 * Publish → delivered to a Subscribe stream (issue 18): `tenants` tenants each hold a Subscribe
 * stream of their own group of `module` on the streamed type's topic, and events of that type are
 * produced at `rate` per second spread over the tenants, as a relay produces them (acks -1; a module
 * may not publish auth.* through the gateway). Latency is from just before the send to the moment the
 * bench's client reads the event from its stream, on one clock. The first `warmupSeconds` of sending
 * are not counted: the streams subscribed a moment before, all at once, and move from fetching the
 * topic themselves to the gateway's tail of it (services/events/consumers/topic-tail.ts) once they
 * have caught up with it.
 */
export interface DeliveryRun {
  /** Events sent after the warm-up (those measured), and with it. */
  sent: number;
  sentWithWarmup: number;
  delivered: number;
  seconds: number;
  p50: number;
  p99: number;
  max: number;
}

interface StreamedEvent { id: string; tenant_id: string }

/** A type the streams receive: its topic, its source and a payload for it. */
interface StreamedType {
  topic: TopicName;
  source: string;
  data: (tenantId: string, key: string) => Record<string, unknown>;
}

/**
 * The types the phase can stream: identity's auth.user.created, which crm's group in the worker
 * also handles for every tenant (a transaction per event, whether the tenant has crm or not), or the
 * bench module's own feed.item.posted on the data topic, which no platform group reads.
 */
export const STREAMED_TYPES: Readonly<Record<string, StreamedType>> = {
  'auth.user.created': {
    topic: topics.auth.name, source: 'identity',
    data: (tenantId, key) => ({ user_id: key, email: `${key}@example.test`, display_name: 'Bench', role: 'member', tenant_id: tenantId }),
  },
  'feed.item.posted': { topic: topics.data.name, source: 'feed', data: (_tenantId, key) => ({ item_id: key, title: 'Bench' }) },
};

export async function measureDelivery(
  kafka: Kafka, grpc: Client, tokens: ReadonlyMap<string, string>, module: string,
  options: { rate: number; seconds: number; warmupSeconds: number; type: string },
): Promise<DeliveryRun> {
  const streamed = STREAMED_TYPES[options.type];
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const streams: Array<ClientReadableStream<{ event: StreamedEvent }>> = [];
  const group = `${module}.bench-${newId().slice(-8)}`;
  for (const [tenantId, token] of tokens) {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${token}`);
    const stream = (grpc as unknown as { Subscribe(request: object, metadata: Metadata): ClientReadableStream<{ event: StreamedEvent }> })
      .Subscribe({ topic: streamed.topic, group_id: group }, metadata);
    stream.on('data', ({ event }: { event: StreamedEvent }) => {
      const started = sentAt.get(event.id);
      if (started !== undefined && event.tenant_id === tenantId) latencies.push(performance.now() - started);
    });
    stream.on('error', (error: ServiceError) => {
      if (error.code !== status.CANCELLED) console.error(`stream of ${tenantId}: ${error.code} ${error.details}`);
    });
    streams.push(stream);
    await waitUntilGroupExists(grpc, streamed.topic, group, metadata);
  }

  const producer = createOrderedProducer(kafka);
  await producer.connect();
  const tenantIds = [...tokens.keys()];
  const warmupEnds = performance.now() + options.warmupSeconds * 1000;
  let sent = 0;
  let counter = 0;
  const event = (): OutgoingRecord => {
    const tenantId = tenantIds[(counter += 1) % tenantIds.length];
    const key = newId();
    const id = newId();
    // Events of the warm-up are delivered like the others but not counted.
    if (performance.now() >= warmupEnds) {
      sentAt.set(id, performance.now());
      sent += 1;
    }
    return encodeEvent({
      topic: streamed.topic, key, correlationId: null,
      envelope: {
        id, type: options.type, source: streamed.source, tenantId, schemaVersion: '1.0.0', timestamp: new Date().toISOString(), traceId: null,
        data: streamed.data(tenantId, key),
      },
    });
  };
  // The arrivals of one tick of the loop (they start one after another, with no wait between them) go to
  // Kafka as one send, as a relay sends what it found, flushed once the tick's arrivals are all in.
  let due: OutgoingRecord[] = [];
  const arrive = (): Promise<void> => {
    if (due.length === 0) {
      queueMicrotask(() => {
        // Not awaited: the schedule keeps its rate while acknowledgements are in flight, as independent publishers would.
        void sendInOrder(producer, due);
        due = [];
      });
    }
    due.push(event());
    return Promise.resolve();
  };
  const started = performance.now();
  try {
    await openLoop({ rate: options.rate, seconds: options.warmupSeconds + options.seconds, tickMs: 10 }, arrive);
    const seconds = (performance.now() - Math.max(started, warmupEnds)) / 1000;
    // The last events' way through: a bounded wait for what is still on its way.
    const deadline = performance.now() + 10_000;
    while (latencies.length < sent && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    latencies.sort((a, b) => a - b);
    return {
      sent, sentWithWarmup: counter, delivered: latencies.length, seconds,
      p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? NaN,
    };
  } finally {
    for (const stream of streams) stream.cancel();
    await producer.disconnect();
  }
}

async function waitUntilGroupExists(grpc: Client, topic: string, group: string, metadata: Metadata): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt += 1) {
    const found = await unaryCall(grpc, 'GetConsumerPosition', { topic, group_id: group }, metadata).then(() => true, () => false);
    if (found) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the group ${group} did not come to exist`);
}
