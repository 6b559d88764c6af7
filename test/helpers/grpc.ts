import { credentials, Metadata, type Client, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { unaryCall } from '../../common/proto';
import { eventServiceClass } from '../../services/events/event-service';
import type { TestGateway } from './app';
import { bearer } from './identity';

/**
 * The gRPC EventService through a real @grpc/grpc-js client loading the project's proto, as any
 * caller would: calls with a bearer token in their metadata, the status of a failed call, and
 * Subscribe streams read into a list.
 */

export function eventServiceClient(target: TestGateway): Client {
  const EventService = eventServiceClass();
  return new EventService(target.grpcAddress, credentials.createInsecure());
}

export function metadataOf(token: string | null, extra: Record<string, string> = {}): Metadata {
  const metadata = new Metadata();
  if (token !== null) metadata.set('authorization', bearer(token).authorization);
  for (const [key, value] of Object.entries(extra)) metadata.set(key, value);
  return metadata;
}

export function unary<T>(client: Client, method: string, request: object, token: string | null, extra: Record<string, string> = {}): Promise<T> {
  return unaryCall<T>(client, method, request, metadataOf(token, extra));
}

export interface CallFailure {
  code: number;
  details: string;
  /** The problem type suffix (trailing metadata `problem-type`). */
  problem: string | undefined;
}

/** The status a call failed with, its details and its problem type (trailing metadata). */
export async function failure(call: Promise<unknown>): Promise<CallFailure> {
  try {
    await call;
  } catch (error) {
    const { code, details, metadata } = error as ServiceError;
    return { code, details, problem: metadata?.get('problem-type')[0]?.toString() };
  }
  throw new Error('the call succeeded');
}

/** The wire Event as the client reads it (bytes as a Buffer, int64 as strings). */
export interface StreamedEvent {
  id: string;
  type: string;
  source: string;
  tenant_id: string;
  data: Buffer;
  schema_version: string;
  timestamp: { seconds: string; nanos: number } | null;
  trace_id: string;
}

/** A Subscribe stream being read: the events so far, and how it ended (null while open). */
export interface OpenSubscription {
  events: StreamedEvent[];
  /** Resolves when the stream ends: code 0 (OK) or the status it failed with. */
  ended: Promise<CallFailure>;
  /** Resolves once `until` holds for the events received so far; rejects after timeoutMs, or when the stream ends first. */
  waitFor(until: (events: readonly StreamedEvent[]) => boolean, timeoutMs?: number): Promise<StreamedEvent[]>;
  cancel(): void;
}

export function subscribe(client: Client, request: { topic: string; group_id: string }, token: string | null): OpenSubscription {
  const stream = (client as unknown as { Subscribe(request: object, metadata: Metadata): ClientReadableStream<{ event: StreamedEvent }> })
    .Subscribe(request, metadataOf(token));
  const events: StreamedEvent[] = [];
  const waiters = new Set<() => void>();
  stream.on('data', ({ event }: { event: StreamedEvent }) => {
    events.push(event);
    for (const wake of waiters) wake();
  });
  const ended = new Promise<CallFailure>((resolve) => {
    stream.on('error', (error: ServiceError) => resolve({ code: error.code, details: error.details, problem: error.metadata?.get('problem-type')[0]?.toString() }));
    stream.on('status', (status: { code: number; details: string }) => {
      if (status.code === 0) resolve({ code: 0, details: status.details, problem: undefined });
    });
  });
  return {
    events,
    ended,
    waitFor(until, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!until(events)) return;
          cleanup();
          resolve([...events]);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out after ${timeoutMs} ms with ${events.length} streamed event(s)`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        void ended.then((outcome) => {
          if (!waiters.has(check)) return;
          cleanup();
          reject(new Error(`the stream ended (${outcome.code} ${outcome.details}) with ${events.length} streamed event(s)`));
        });
        waiters.add(check);
        check();
      });
    },
    cancel: () => stream.cancel(),
  };
}
