import type { DatabasePool } from '../../db/pool';
import type { Logger } from '../../common/logger';
import { listGlobalFlags } from '../../db/queries/gateway/feature-flags.queries';

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
 * reloaded on an interval. Until the first load succeeds it retries quickly, so a gateway that
 * starts before PostgreSQL becomes ready soon after PostgreSQL does. A failed reload keeps the last
 * good set: stale flags beat no flags, and /health reports the staleness.
 */
export class FeatureFlagCache {
  private flags = new Map<string, boolean>();
  private state: FlagCacheState = { loaded: false, refreshedAt: null, lastLoadMs: null, lastError: null };
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

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

  /** Loads the flags once; resolves whether or not the load succeeded (see status()). */
  async refresh(): Promise<void> {
    const started = performance.now();
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
