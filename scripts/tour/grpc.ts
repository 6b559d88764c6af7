import { credentials, Metadata, status as grpcStatus, type Client, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { serviceOf } from '../../common/proto';
import { StepFailed, Unavailable } from './failures';
import { REQUEST_TIMEOUT_MS } from './timeouts';

// The gRPC EventService client, through @grpc/grpc-js and the project's proto.

/** A gRPC call answered with a status other than OK (and not a passing fault). */
export class RpcRefused extends StepFailed {
  constructor(readonly code: grpcStatus, message: string) {
    super(message);
  }
}

/** The wire Event of protos/platform/events/v1/events.proto, as @grpc/proto-loader reads it. */
export interface WireEvent {
  id: string;
  type: string;
  tenant_id: string;
  data: Buffer;
}

export class EventService {
  private readonly client: Client;

  constructor(address: string) {
    const Service = serviceOf('platform/events/v1/events.proto', 'platform.events.v1.EventService');
    this.client = new Service(address, credentials.createInsecure());
  }

  private metadata(token: string): Metadata {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${token}`);
    return metadata;
  }

  unary<T>(method: string, request: object, token: string): Promise<T> {
    const invoke = (this.client as unknown as Record<string, (...args: unknown[]) => void>)[method];
    return new Promise((resolve, reject) => {
      invoke.call(this.client, request, this.metadata(token), { deadline: Date.now() + REQUEST_TIMEOUT_MS }, (error: ServiceError | null, response: T) => {
        if (!error) {
          resolve(response);
          return;
        }
        const failure = `${method} failed: ${grpcStatus[error.code] ?? error.code} ${error.details}`;
        reject([grpcStatus.UNAVAILABLE, grpcStatus.DEADLINE_EXCEEDED].includes(error.code) ? new Unavailable(failure) : new RpcRefused(error.code, failure));
      });
    });
  }

  subscribe(request: { topic: string; group_id: string }, token: string): ClientReadableStream<{ event: WireEvent }> {
    return (this.client as unknown as { Subscribe(request: object, metadata: Metadata): ClientReadableStream<{ event: WireEvent }> })
      .Subscribe(request, this.metadata(token));
  }

  close(): void {
    this.client.close();
  }
}
