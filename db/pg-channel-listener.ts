import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { config } from '../common/config';
import type { Logger } from '../common/logger';
import { withTimeout } from '../common/timeout';
import { pgSsl, type DatabaseSsl } from './pg-ssl';

/** What a PgChannelListener tells the cache it keeps fresh. */
export interface ChannelSubscriber {
  /** LISTEN is in effect: every transaction that commits from now on is announced. */
  listening(): void;
  /** The connection is gone: announcements may be missed until listening() is called again. */
  lost(): void;
  notified(payload: string): void;
}

export interface PgChannelListenerOptions {
  url: string;
  /** Names the log lines. */
  name: string;
  /** The connection's application_name, by which pg_stat_activity tells the processes apart. */
  applicationName: string;
  /** How long connecting, and each heartbeat (HEARTBEAT_MS), may take before the connection counts as lost. */
  timeoutMs: number;
  /** TLS to the server (db/pg-ssl.ts); default: the process's settings. */
  ssl?: DatabaseSsl;
}

/**
 * A connection that silently died (a half-open socket) would look like a quiet channel: this often
 * LISTEN is sent again (a no-op for the server) and must be answered within timeoutMs, or the
 * connection counts as lost.
 */
const HEARTBEAT_MS = 5000;

/**
 * One plain `pg` connection (not a pool's: LISTEN belongs to a session, and slonik has no
 * notification API) that LISTENs on some channels, each with its subscriber, and reconnects until
 * stopped, with a doubling delay up to 5 s, like the runtime's start-up retries. The subscribers
 * hear when listening starts and stops, so they can tell the times when they may rely on
 * notifications from the gaps, in which announcements are lost. Channels that share a connection
 * start and stop being heard together.
 */
export class PgChannelListener {
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;
  private client: Client | undefined;
  isListening = false;
  /** How many times LISTEN took effect (the first connection and every reconnection). */
  listens = 0;

  constructor(
    private readonly options: PgChannelListenerOptions,
    private readonly subscribers: Readonly<Record<string, ChannelSubscriber>>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.client?.end().catch(() => undefined);
    await this.running;
  }

  private async run(): Promise<void> {
    const { name } = this.options;
    let delayMs = 250;
    while (!this.stopping.signal.aborted) {
      try {
        await this.listenUntilLost();
        delayMs = 250;
      } catch (error) {
        if (!this.stopping.signal.aborted) this.logger.warn({ err: error, retryInMs: delayMs }, `${name} listener connection failed`);
      }
      await sleep(delayMs, undefined, { signal: this.stopping.signal }).catch(() => undefined);
      delayMs = Math.min(delayMs * 2, 5000);
    }
  }

  /** Connects and listens; settles when the connection ends, fails or misses a heartbeat. */
  private async listenUntilLost(): Promise<void> {
    const { url, name, applicationName, timeoutMs, ssl = config().db.ssl } = this.options;
    const channels = Object.keys(this.subscribers);
    const subscribers = Object.values(this.subscribers);
    const client = new Client({ connectionString: url, application_name: applicationName, connectionTimeoutMillis: timeoutMs, ssl: pgSsl(ssl) });
    this.client = client;
    let heartbeat: NodeJS.Timeout | undefined;
    try {
      let fail!: (error: unknown) => void;
      const lost = new Promise<void>((resolve, reject) => {
        fail = reject;
        client.on('error', reject);
        client.on('end', resolve);
      });
      lost.catch(() => undefined); // may fail before it is awaited (during connect); awaited below all the same
      client.on('notification', (message) => {
        if (Object.hasOwn(this.subscribers, message.channel)) this.subscribers[message.channel].notified(message.payload ?? '');
      });
      await client.connect();
      if (this.stopping.signal.aborted) return;
      // Repeatable: LISTEN on a channel already listened to is a no-op.
      const listen = channels.map((channel) => `LISTEN ${client.escapeIdentifier(channel)}`).join('; ');
      await client.query(listen);
      heartbeat = setInterval(() => void withTimeout(client.query(listen), timeoutMs, `${name} heartbeat`).catch(fail), HEARTBEAT_MS);
      this.isListening = true;
      this.listens += 1;
      for (const subscriber of subscribers) subscriber.listening();
      this.logger.info({ channels }, `${name} listener listening`);
      await lost;
    } finally {
      clearInterval(heartbeat);
      if (this.isListening) {
        this.isListening = false;
        for (const subscriber of subscribers) subscriber.lost();
        if (!this.stopping.signal.aborted) this.logger.warn({ channels }, `${name} listener lost its connection`);
      }
      this.client = undefined;
      await client.end().catch(() => undefined);
    }
  }
}
