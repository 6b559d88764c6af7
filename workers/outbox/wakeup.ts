import type { Logger } from '../../common/logger';
import { PgChannelListener, type ChannelSubscriber } from '../../db/pg-channel-listener';
import { OUTBOX_CHANNEL } from '../../db/queries/events/outbox-relay.queries';

/** How long connecting, and each LISTEN heartbeat, may take before the connection counts as lost. */
const TIMEOUT_MS = 5000;

/**
 * Wakes the relay when a transaction inserts into the outbox (the trigger of migration 0001 sends a
 * NOTIFY), so an event leaves within milliseconds instead of at the next idle poll. The connection is
 * the shared PgChannelListener's, which reconnects by itself; losing it costs only latency, since
 * the relay keeps polling. Whenever LISTEN takes effect (again) the relay is woken too: what was
 * committed before it did was never announced.
 */
export class OutboxWakeup implements ChannelSubscriber {
  private readonly listener: PgChannelListener;
  /** A notification (or a new LISTEN) came since the last reset(). */
  private pending = false;
  private wake: (() => void) | null = null;

  constructor(databaseUrl: string, logger: Logger) {
    this.listener = new PgChannelListener({
      url: databaseUrl, name: 'outbox', applicationName: 'outbox-relay-listen', timeoutMs: TIMEOUT_MS,
    }, { [OUTBOX_CHANNEL]: this }, logger);
  }

  /** Starts listening, in the background; the relay polls meanwhile. */
  listen(): void {
    this.listener.start();
  }

  listening(): void {
    this.notified();
  }

  lost(): void {}

  notified(): void {
    this.pending = true;
    this.wake?.();
  }

  /** Forgets earlier notifications: the caller is about to read the table itself. */
  reset(): void {
    this.pending = false;
  }

  /**
   * Resolves at the first notification since reset(), after timeoutMs, or when the signal aborts;
   * answers whether a notification came.
   */
  async wait(timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    if (!this.pending && !signal.aborted) {
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
    return this.pending;
  }

  close(): Promise<void> {
    return this.listener.stop();
  }
}
