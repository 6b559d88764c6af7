import type { ServerDuplexStream, ServerWritableStream } from '@grpc/grpc-js';
import type { EventEnvelope } from '../../common/event-envelope';
import { DeliveryAborted } from '../../services/events/consumers/delivery-rules';
import type { WatchedGroup } from '../../services/events/consumer-lag';
import type { Subscription, TenantGroup } from '../../services/events/subscription-rules';
import type { OpenStreams } from './open-streams';

/** The wire Event of events.proto as @grpc/proto-loader serializes it (keepCase; int64 as decimal strings). */
export interface WireEvent {
  id: string;
  type: string;
  source: string;
  tenant_id: string;
  data: Buffer;
  schema_version: string;
  timestamp: { seconds: string; nanos: number };
  trace_id: string;
}

export interface SubscribeRequest { topic: string; group_id: string }
export interface SubscribeResponse { event: WireEvent }

/** A running delivery of a subscription's group; stop() resolves once its consumer has left the group. */
export interface RunningDelivery {
  stop(): Promise<void>;
}

/**
 * Starts a subscription's consumer through the delivery pipeline (services/events/consumers/):
 * tenant and type filters, de-duplication, attempts and dead letters. `deliver` is called for each
 * event in order per partition and must resolve once the event has been written to the stream;
 * `failed` is called if the consumer stops for good on its own.
 */
export type StartDelivery = (
  subscription: Subscription, deliver: (envelope: EventEnvelope) => Promise<void>, failed: (error: Error) => void,
) => Promise<RunningDelivery>;

export function wireEventOf(envelope: EventEnvelope): WireEvent {
  const ms = Date.parse(envelope.timestamp);
  return {
    id: envelope.id,
    type: envelope.type,
    source: envelope.source,
    tenant_id: envelope.tenantId,
    data: Buffer.from(JSON.stringify(envelope.data), 'utf8'),
    schema_version: envelope.schemaVersion,
    timestamp: { seconds: String(Math.floor(ms / 1000)), nanos: (((ms % 1000) + 1000) % 1000) * 1_000_000 },
    trace_id: envelope.traceId ?? '',
  };
}

export const watchedOf = ({ groupId, group, tenantId, topic }: TenantGroup): WatchedGroup => ({ groupId, group, tenantId, topic });

/** A call that streams events: Subscribe's, or Consume's, which also reads acknowledgements (consume-handler.ts). */
export type EventStreamCall = ServerWritableStream<unknown, SubscribeResponse> | ServerDuplexStream<unknown, SubscribeResponse>;

/** How one event reaches the caller; resolves once it counts as delivered, throws DeliveryAborted when the stream is gone. */
export type Deliver = (envelope: EventEnvelope, ending: AbortSignal) => Promise<void>;

/**
 * Writes one message and resolves once grpc-js has handed it to the HTTP/2 stream (its write
 * callback), and, when the stream's buffer was full (write returned false), once it has drained: a
 * caller that reads slowly slows its group's consumer down instead of filling the gateway's memory.
 * A stream that is closed, fails the write or is ended meanwhile (`ending`: the caller cancelled, or
 * Unsubscribe or ReplayFrom ended it) aborts the delivery (DeliveryAborted): the event was not
 * delivered and stays uncommitted for the group's next member.
 */
export async function writeMessage(call: EventStreamCall, message: SubscribeResponse, ending: AbortSignal): Promise<void> {
  if (ending.aborted || call.cancelled || call.writableEnded || call.destroyed) throw new DeliveryAborted('The stream is closed');
  let ready = true;
  await unlessEnding(ending, new Promise<void>((resolve, reject) => {
    ready = call.write(message, (error?: Error | null) => (error ? reject(new DeliveryAborted('The stream failed', { cause: error })) : resolve()));
  }));
  if (!ready) await unlessEnding(ending, new Promise<void>((resolve) => call.once('drain', resolve)));
}

/** Subscribe's delivery: an event counts as delivered once written. */
export const writeEvent = (call: EventStreamCall): Deliver => (envelope, ending) => writeMessage(call, { event: wireEventOf(envelope) }, ending);

export function unlessEnding(ending: AbortSignal, work: Promise<void>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const ended = () => reject(new DeliveryAborted('The stream ended'));
    ending.addEventListener('abort', ended, { once: true });
    work.then(resolve, reject).finally(() => ending.removeEventListener('abort', ended));
  });
}

/**
 * Streams a subscription's events until the caller cancels or the connection closes (docs/reference/events.md#resources),
 * or until Unsubscribe or ReplayFrom ends the group's streams in this gateway (the call then ends
 * with OK). Resolves when the stream should end with OK, rejects when its consumer failed for good;
 * either way the consumer has left the group by then.
 */
export async function streamSubscription(
  streams: OpenStreams, start: StartDelivery, call: EventStreamCall, subscription: Subscription, deliver: Deliver = writeEvent(call),
): Promise<void> {
  const ending = new AbortController();
  let fail!: (error: Error) => void;
  const finished = new Promise<void>((resolve, reject) => {
    ending.signal.addEventListener('abort', () => resolve(), { once: true });
    fail = reject;
  });
  // A failure reported after the stream ended has nobody left to tell.
  finished.catch(() => undefined);
  call.once('cancelled', () => ending.abort());
  if (call.cancelled) return;

  const starting = start(subscription, (envelope) => deliver(envelope, ending.signal), (error) => fail(error));
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      // First the write in hand is let go, then the consumer leaves the group after it.
      ending.abort();
      const running = await starting.catch(() => null);
      await running?.stop();
    })();
    return stopping;
  };
  const unregister = streams.add({ group: watchedOf(subscription), end: stop });
  try {
    await starting;
    await finished;
  } finally {
    await stop();
    unregister();
  }
}
