import { Client } from 'pg';
import type { Logger } from '../../common/logger';
import { listenForOutboxInserts } from '../../db/queries/events/outbox-relay.queries';

/**
 * Wakes the relay when a transaction inserts into the outbox (the trigger of migration 0001 sends a
 * NOTIFY), so an event leaves within milliseconds instead of at the next idle poll. Losing this
 * connection costs only latency: the relay keeps polling, and the connection is re-opened on the
 * next wait.
 */
export class OutboxWakeup {
  private client: Client | null = null;
  private notified = false;
  private wake: (() => void) | null = null;
  private warned = false;

  constructor(private readonly databaseUrl: string, private readonly logger: Logger) {}

  /** Opens the LISTEN connection if it is not open; failures are logged once per outage. */
  async listen(): Promise<void> {
    if (this.client) return;
    const client = new Client({ connectionString: this.databaseUrl, application_name: 'outbox-relay-listen', connectionTimeoutMillis: 5000 });
    client.on('notification', () => {
      this.notified = true;
      this.wake?.();
    });
    client.on('error', (error) => {
      // A dying connection may report more than one error; the first one says it all.
      if (this.client !== client) return;
      this.logger.warn({ err: error }, 'outbox LISTEN connection failed; polling until it is back');
      this.forget(client);
    });
    client.on('end', () => this.forget(client));
    try {
      await client.connect();
      await listenForOutboxInserts(client);
      this.client = client;
      this.warned = false;
    } catch (error) {
      if (!this.warned) this.logger.warn({ err: error }, 'cannot LISTEN for outbox inserts; polling until it can');
      this.warned = true;
      await client.end().catch(() => undefined);
    }
  }

  /** Forgets earlier notifications: the caller is about to read the table itself. */
  reset(): void {
    this.notified = false;
  }

  /**
   * Resolves at the first notification since reset(), after timeoutMs, or when the signal aborts;
   * answers whether a notification came.
   */
  async wait(timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    await this.listen();
    if (!this.notified && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          this.wake = null;
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        signal.addEventListener('abort', done, { once: true });
        this.wake = done;
      });
    }
    return this.notified;
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private forget(client: Client): void {
    if (this.client === client) this.client = null;
  }
}
