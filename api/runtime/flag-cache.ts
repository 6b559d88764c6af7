import type { DatabasePool } from '../../db/pool';
import type { Logger } from '../../common/logger';
import type { ChannelSubscriber } from '../../db/pg-channel-listener';
import { listGlobalFlags } from '../../services/gateway/feature-flags';

export interface FlagCacheState {
  loaded: boolean;
  /** When the last successful load finished (epoch ms), or null before the first. */
  refreshedAt: number | null;
  /** How long the last successful load took. */
  lastLoadMs: number | null;
  /** Why the last attempt failed, or null when it succeeded. */
  lastError: string | null;
}

/**
 * The gateway's copy of the global feature flags, loaded at start-up (readiness waits for it) and
 * reloaded whenever PostgreSQL announces a change (migration 0035, channel feature_flags, heard
 * through the gateway's PgChannelListener), so every gateway applies a change within a second of
 * its commit. When listening begins, at start-up and after a lost connection, it reloads once:
 * changes committed while nobody listened were announced to no one.
 *
 * The interval reload stays as the safety net: it bounds staleness when an announced reload fails
 * (the database was away for a moment) and while the listener cannot connect. Until the first load
 * succeeds it retries quickly, so a gateway that starts before PostgreSQL becomes ready soon after
 * PostgreSQL does. A failed reload keeps the last good set: stale flags beat no flags, and /health
 * reports the staleness.
 *
 * Loads run one at a time. A reload asked for while one runs waits for it and then reads again:
 * the running one may have read before the announced change committed. Asks that arrive while a
 * reload waits share it, so a burst of announcements costs at most two loads.
 */
export class FeatureFlagCache implements ChannelSubscriber {
  private flags = new Map<string, boolean>();
  private state: FlagCacheState = { loaded: false, refreshedAt: null, lastLoadMs: null, lastError: null };
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** The last load asked for (running or waiting); settles after every load before it. */
  private latest: Promise<void> = Promise.resolve();
  /** A load that has not begun yet: a new ask joins it, since it will read after the ask. */
  private waiting: Promise<void> | undefined;
  readonly stats = { loads: 0, announcements: 0 };

  constructor(
    private readonly db: DatabasePool,
    private readonly logger: Logger,
    readonly refreshMs: number,
    private readonly firstLoadRetryMs = Math.min(1000, refreshMs),
  ) {}

  start(): void {
    this.stopped = false;
    void this.refreshAndReschedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  isEnabled(key: string, fallback = false): boolean {
    return this.flags.get(key) ?? fallback;
  }

  status(): Readonly<FlagCacheState> {
    return this.state;
  }

  listening(): void {
    if (!this.stopped) void this.refresh();
  }

  /** Nothing to drop: the flags stay as loaded, and the interval reloads them until listening resumes. */
  lost(): void {}

  /** Some flag changed; the payload is empty (migration 0035). */
  notified(): void {
    if (this.stopped) return;
    this.stats.announcements += 1;
    void this.refresh();
  }

  /** Loads the flags once, after any load already running; resolves whether or not the load succeeded (see status()). */
  refresh(): Promise<void> {
    if (!this.waiting) {
      this.waiting = this.latest.then(() => {
        this.waiting = undefined;
        return this.load();
      });
      this.latest = this.waiting;
    }
    return this.waiting;
  }

  private async load(): Promise<void> {
    const started = performance.now();
    this.stats.loads += 1;
    try {
      const rows = await listGlobalFlags(this.db);
      this.flags = new Map(rows.map((row) => [row.key, row.enabled]));
      this.state = { loaded: true, refreshedAt: Date.now(), lastLoadMs: Math.round(performance.now() - started), lastError: null };
    } catch (error) {
      this.state = { ...this.state, lastError: error instanceof Error ? error.message : String(error) };
      this.logger.warn({ err: error }, 'feature flags could not be loaded');
    }
  }

  private async refreshAndReschedule(): Promise<void> {
    await this.refresh();
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.refreshAndReschedule(), this.state.loaded ? this.refreshMs : this.firstLoadRetryMs);
    this.timer.unref();
  }
}
