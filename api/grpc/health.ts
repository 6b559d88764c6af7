import { status as GrpcStatus, type sendUnaryData, type ServerUnaryCall, type ServerWritableStream, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { serviceOf } from '../../common/proto';
import type { Logger } from '../../common/logger';

/** grpc.health.v1.HealthCheckResponse.ServingStatus, as the proto loader spells its values (enums: String). */
export type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

interface HealthCheckRequest {
  service: string;
}

interface HealthCheckResponse {
  status: ServingStatus;
}

/** The standard health service (protos/grpc/health/v1/health.proto), which orchestrators and grpcurl probe. */
export const healthServiceClass = () => serviceOf('grpc/health/v1/health.proto', 'grpc.health.v1.Health');

/**
 * The serving status of the EventService: SERVING while the event broker answers (its check is
 * /health's, api/health/components.ts), NOT_SERVING otherwise. A Check runs the check (concurrent ones
 * share one run). While anyone watches, the check also runs every `intervalMs`, and each change is
 * told to the watchers: the staleness a watcher sees is bounded by that interval plus the check's deadline.
 */
export class EventServiceServing {
  private readonly watchers = new Set<(status: ServingStatus) => void>();
  private inFlight: Promise<ServingStatus> | undefined;
  private last: ServingStatus | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly brokerAnswers: () => Promise<boolean>, private readonly intervalMs: number) {}

  /** The status now; a change found is also told to the watchers. */
  current(): Promise<ServingStatus> {
    this.inFlight ??= this.brokerAnswers()
      .catch(() => false)
      .then((answers) => this.found(answers ? 'SERVING' : 'NOT_SERVING'))
      .finally(() => { this.inFlight = undefined; });
    return this.inFlight;
  }

  /** Tells `listener` every change from now on; the returned function stops it. */
  watch(listener: (status: ServingStatus) => void): () => void {
    this.watchers.add(listener);
    this.timer ??= setInterval(() => void this.current(), this.intervalMs);
    return () => {
      this.watchers.delete(listener);
      if (this.watchers.size === 0) this.stopPolling();
    };
  }

  close(): void {
    this.watchers.clear();
    this.stopPolling();
  }

  private found(status: ServingStatus): ServingStatus {
    const changed = this.last !== undefined && this.last !== status;
    this.last = status;
    if (changed) for (const watcher of this.watchers) watcher(status);
    return status;
  }

  private stopPolling(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * The handlers of grpc.health.v1.Health for `services` (the empty name is the server as a whole, as the
 * protocol asks). Check of another name is NOT_FOUND; Watch of another name answers SERVICE_UNKNOWN and
 * stays open, as the protocol says. `close` ends the open Watch streams, so the server can shut down.
 */
export function healthHandlers(serving: EventServiceServing, services: readonly string[], logger: Logger): {
  handlers: UntypedServiceImplementation; close(): void;
} {
  const known = new Set(['', ...services]);
  const streams = new Set<ServerWritableStream<HealthCheckRequest, HealthCheckResponse>>();
  const handlers = {
    Check(call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>, callback: sendUnaryData<HealthCheckResponse>) {
      if (!known.has(call.request.service)) {
        callback({ code: GrpcStatus.NOT_FOUND, details: `unknown service ${call.request.service}` });
        return;
      }
      serving.current().then((status) => callback(null, { status }), (error: unknown) => {
        logger.warn({ err: error }, 'gRPC health check failed');
        callback(null, { status: 'NOT_SERVING' });
      });
    },
    Watch(call: ServerWritableStream<HealthCheckRequest, HealthCheckResponse>) {
      streams.add(call);
      let stop: () => void = () => undefined;
      call.on('cancelled', () => {
        stop();
        streams.delete(call);
      });
      if (!known.has(call.request.service)) {
        call.write({ status: 'SERVICE_UNKNOWN' });
        return;
      }
      // The status now first, then every change after it (watching starts only once it is written).
      void serving.current().then((status) => {
        if (!streams.has(call)) return;
        call.write({ status });
        stop = serving.watch((next) => call.write({ status: next }));
      });
    },
  };
  return {
    handlers,
    close() {
      serving.close();
      for (const stream of streams) stream.end();
      streams.clear();
    },
  };
}
