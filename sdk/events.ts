import { credentials, Metadata, status, type Client, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import { newId } from '../common/ids';
import { serviceOf, unaryCall } from '../common/proto';
import { defaultTopicFor } from '../services/events/topics';

/**
 * The module SDK of the event bus (docs/reference/events.md): what a module's own code calls to publish its
 * declared events and to consume the ones it subscribes to, over the gateway's gRPC EventService.
 * The tenant is always the token's (the gateway overwrites any other); the token is asked for on
 * every call, so a caller can hand out fresh ones as they expire.
 *
 *   const bus = new EventBusClient({ address: '127.0.0.1:50051', token: () => session.accessToken });
 *   const { eventId } = await bus.publish('crm.contact.created', { id, firstName }, { idempotencyKey });
 *   const subscription = bus.subscribe(['auth.user.created'], async (event) => { … }, { group: 'crm.user-created' });
 *
 * Publishing is not buffered (docs/reference/events.md#rule-10): a broker that is down rejects the call with
 * UNAVAILABLE at once, and the caller decides. A subscription acknowledges each event only after its
 * handler resolved (the Consume RPC); a handler that throws is a failed attempt, the event comes
 * again, and after BROKER_MAX_ATTEMPTS it goes to the tenant's dead letters. Events are handled one
 * at a time per topic, in the order the group receives them (per entity, docs/reference/events.md#rule-2).
 */
export interface EventBusClientOptions {
  /** `host:port` of the EventService (the gateway's GRPC_PORT, 127.0.0.1:50051 locally). */
  address: string;
  /** The bearer token of the calls: an access token, or an API key (`plat_…`), of the tenant the module acts for. */
  token: () => string | Promise<string>;
}

export interface PublishOptions {
  /** The event id, and so the key consumers de-duplicate by; a new UUID v7 when absent. */
  idempotencyKey?: string;
  /** Semantic version of the payload's schema (default 1.0.0). */
  schemaVersion?: string;
  /** The partition key: the entity the event is about. Default: the payload's `id`, else the event id. */
  key?: string;
}

/** An event as a subscriber receives it. */
export interface DeliveredEvent {
  id: string;
  type: string;
  source: string;
  tenantId: string;
  data: Record<string, unknown>;
  schemaVersion: string;
  timestamp: string | null;
  traceId: string | null;
}

export type EventHandler = (event: DeliveredEvent) => Promise<void>;

export interface SubscribeOptions {
  /** The consumer group, `<module>.<handler>`: the module must be installed and declare the types it receives. */
  group: string;
}

export interface Subscription {
  /** Ends the subscription after the event in hand; resolves `closed`. */
  close(): void;
  /** Settles when the subscription ends: resolved by close(), rejected by a refusal no retry can change. */
  closed: Promise<void>;
}

const SERVICE = 'platform.events.v1.EventService';

// Refusals a reconnection cannot change; anything else (the gateway restarting, the broker away) is retried.
const FINAL = new Set<number>([status.UNAUTHENTICATED, status.PERMISSION_DENIED, status.NOT_FOUND, status.INVALID_ARGUMENT, status.UNIMPLEMENTED]);
const RECONNECT_FIRST_MS = 200;
const RECONNECT_MAX_MS = 5000;

// The wire messages of protos/platform/events/v1/events.proto, as @grpc/proto-loader gives them.
interface WireEvent {
  id: string; type: string; source: string; tenant_id: string; data: Uint8Array; schema_version: string;
  timestamp: { seconds: string; nanos: number } | null; trace_id: string;
}

export class EventBusClient {
  private readonly client: Client;

  constructor(private readonly options: EventBusClientOptions) {
    const EventService = serviceOf('platform/events/v1/events.proto', SERVICE);
    this.client = new EventService(options.address, credentials.createInsecure());
  }

  async publish(type: string, data: Record<string, unknown>, options: PublishOptions = {}): Promise<{ eventId: string }> {
    const id = options.idempotencyKey ?? newId();
    const key = options.key ?? (typeof data.id === 'string' ? data.id : id);
    const event = { id, type, data: Buffer.from(JSON.stringify(data)), schema_version: options.schemaVersion ?? '1.0.0' };
    const response = await unaryCall<{ event_id: string }>(this.client, 'Publish', { topic: defaultTopicFor(type), key, event }, await this.metadata());
    return { eventId: response.event_id };
  }

  /**
   * Consumes `types` for the group: one acknowledged stream per topic the types are published to.
   * Events of the group's other declared types on those topics are acknowledged without the handler.
   */
  subscribe(types: readonly string[], handler: EventHandler, { group }: SubscribeOptions): Subscription {
    const wanted = new Set(types);
    const open = () => this.openConsume();
    const streams = [...new Set(types.map(defaultTopicFor))].map((topic) => new ConsumeLoop(open, { topic, group_id: group }, wanted, handler));
    const closed = Promise.all(streams.map((stream) => stream.closed)).then(() => undefined);
    // Observed here, so a caller that never awaits `closed` does not crash the process on a refusal.
    closed.catch(() => undefined);
    return { close: () => streams.forEach((stream) => stream.close()), closed };
  }

  close(): void {
    this.client.close();
  }

  private async openConsume(): Promise<ConsumeCall> {
    const metadata = await this.metadata();
    return (this.client as unknown as { Consume(metadata: Metadata): ConsumeCall }).Consume(metadata);
  }

  private async metadata(): Promise<Metadata> {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${await this.options.token()}`);
    return metadata;
  }
}

type ConsumeCall = ClientDuplexStream<object, { event: WireEvent }>;

/** One topic's Consume call, opened again after a failure that a retry may cure. */
class ConsumeLoop {
  readonly closed: Promise<void>;
  private call: ConsumeCall | null = null;
  private stopped = false;
  private wakeUp: () => void = () => undefined;

  constructor(
    private readonly open: () => Promise<ConsumeCall>, private readonly subscription: { topic: string; group_id: string },
    private readonly wanted: ReadonlySet<string>, private readonly handler: EventHandler,
  ) {
    this.closed = this.run();
    this.closed.catch(() => undefined);
  }

  close(): void {
    this.stopped = true;
    this.call?.cancel();
    this.wakeUp();
  }

  private async run(): Promise<void> {
    let pause = RECONNECT_FIRST_MS;
    while (!this.stopped) {
      const error = await this.consumeOnce(() => { pause = RECONNECT_FIRST_MS; });
      if (this.stopped) return;
      if (error && FINAL.has(error.code)) throw error;
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
        setTimeout(resolve, pause);
      });
      pause = Math.min(pause * 2, RECONNECT_MAX_MS);
    }
  }

  /** Resolves with the call's failure (null when it ended cleanly); `received` is called on every event. */
  private async consumeOnce(received: () => void): Promise<ServiceError | null> {
    const call = await this.open();
    this.call = call;
    call.write({ subscribe: this.subscription });
    // One event at a time: the next is taken only after the previous one was answered.
    let chain = Promise.resolve();
    call.on('data', ({ event }: { event: WireEvent }) => {
      received();
      chain = chain.then(() => this.answer(call, event));
    });
    return new Promise((resolve) => {
      call.on('error', (error: ServiceError) => resolve(error.code === status.CANCELLED && this.stopped ? null : error));
      call.on('end', () => resolve(null));
    });
  }

  private async answer(call: ConsumeCall, wire: WireEvent): Promise<void> {
    const event = deliveredOf(wire);
    let ack: { event_id: string; success: boolean; error: string };
    try {
      if (this.wanted.has(event.type)) await this.handler(event);
      ack = { event_id: event.id, success: true, error: '' };
    } catch (error) {
      ack = { event_id: event.id, success: false, error: error instanceof Error ? error.message : String(error) };
    }
    if (!this.stopped) call.write({ ack });
  }
}

function deliveredOf(wire: WireEvent): DeliveredEvent {
  const data = JSON.parse(Buffer.from(wire.data).toString('utf8')) as Record<string, unknown>;
  return {
    id: wire.id, type: wire.type, source: wire.source, tenantId: wire.tenant_id, data, schemaVersion: wire.schema_version || '1.0.0',
    timestamp: wire.timestamp ? new Date(Number(wire.timestamp.seconds) * 1000 + Math.floor(wire.timestamp.nanos / 1e6)).toISOString() : null,
    traceId: wire.trace_id || null,
  };
}
