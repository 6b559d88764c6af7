import { Client, credentials } from '@grpc/grpc-js';

/**
 * Whether this gateway's EventService answers, for /health (reported within the `event_broker`
 * component: docs/reference/gateway.md#rule-22 fixes the eight component keys). The check is a real connection to the
 * bound address: the channel must become ready (HTTP/2 connection and settings exchanged) within
 * the check's deadline. The client is kept, so a healthy check costs no new connection.
 */
export class EventServiceProbe {
  private address: string | null = null;
  private client: Client | null = null;

  /** Called by the server once bound, and with null once it stopped. */
  listening(address: string | null): void {
    this.client?.close();
    this.client = null;
    this.address = address;
  }

  /** Null when the service answers; otherwise why not. */
  async problem(timeoutMs: number): Promise<string | null> {
    if (!this.address) return 'the EventService (gRPC) is not listening';
    this.client ??= new Client(this.address, credentials.createInsecure());
    const client = this.client;
    const address = this.address;
    return new Promise((resolve) => {
      client.waitForReady(Date.now() + timeoutMs, (error) => {
        resolve(error ? `the EventService (gRPC) on ${address} does not answer: ${error.message}` : null);
      });
    });
  }

  close(): void {
    this.listening(null);
  }
}
