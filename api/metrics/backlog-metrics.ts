import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../../common/logger';
import type { OperationsBacklogs } from '../../services/gateway/probes';

export interface SharedReadingSettings {
  /** How long one reading serves every scrape (0: each scrape reads once). */
  cacheMs: number;
  /** The longest a scrape waits for a reading; the reading itself is bounded by the database (statement_timeout). */
  timeoutMs: number;
}

/**
 * One reading shared by every gauge of a scrape (prom-client collects them at once) and by every
 * scrape within `cacheMs`, so several scrapers cost the database one query. A reading is started
 * only when none runs and the last attempt, failed or not, is `cacheMs` old: a failing database is
 * not asked more often than a healthy one. A scrape waits at most `timeoutMs` for it (the pool may
 * be exhausted, which no statement_timeout bounds) and then answers with the last good reading,
 * so /metrics keeps serving the gateway's other metrics while PostgreSQL is slow.
 */
export class SharedReading<T> {
  private last: { value: T; readAt: number } | undefined;
  private attemptedAt = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly settings: SharedReadingSettings,
    private readonly failed: (err: unknown) => void,
  ) {}

  /** The last good reading and when it completed (ms since the epoch); undefined until one succeeded. */
  async current(): Promise<{ value: T; readAt: number } | undefined> {
    if (!this.inFlight && Date.now() - this.attemptedAt >= this.settings.cacheMs) {
      this.attemptedAt = Date.now();
      this.inFlight = this.read()
        .then((value) => { this.last = { value, readAt: Date.now() }; }, this.failed)
        .finally(() => { this.inFlight = undefined; });
    }
    if (this.inFlight) await waitAtMost(this.inFlight, this.settings.timeoutMs);
    return this.last;
  }
}

function waitAtMost(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<void>((resolve) => { timer = setTimeout(resolve, ms); });
  return Promise.race([work, expiry]).finally(() => clearTimeout(timer));
}

/**
 * The backlogs operators alert on (docs/operations.md#what-to-watch), read across tenants when
 * /metrics is scraped (db/queries/gateway/backlogs.queries.ts, migration 0037):
 * - `outbox_pending_events`, `outbox_oldest_pending_age_seconds`: rows the outbox relay has not
 *   published (workers/outbox/relay.ts logs the same numbers in its "outbox status" line);
 * - `event_dead_letters_pending{group}`: pending dead letters per platform consumer group, every
 *   tenant's subscriptions summed as `group="tenant-subscriptions"` (one series per tenant would not
 *   stay bounded); a group with none has no series. `group` is the label of the consumer-lag gauges;
 * - `files_pending_scan`, `files_oldest_pending_scan_age_seconds`: uploads waiting for their scan;
 * - `audit_fallback_buffered_records`, `audit_fallback_oldest_buffered_age_seconds`: audit records
 *   the intake put in its PostgreSQL buffer while Kafka did not answer (docs/decisions/audit.md);
 * - `backlog_gauges_last_read_timestamp_seconds`: when these were last read. While readings fail the
 *   gauges keep their last values and this stops advancing, so a frozen backlog is told from a quiet one.
 */
export function registerBacklogMetrics(
  registry: Registry, read: () => Promise<OperationsBacklogs>, settings: SharedReadingSettings, logger: Logger,
): void {
  const reading = new SharedReading(read, settings, (err) => {
    logger.warn({ err }, 'backlog gauges not read; /metrics keeps their last values');
  });
  const gauge = (name: string, help: string, value: (backlogs: OperationsBacklogs) => number) => new Gauge({
    name, help, registers: [registry],
    async collect() {
      const current = await reading.current();
      if (current) this.set(value(current.value));
    },
  });
  gauge('outbox_pending_events', 'Outbox rows the relay has not yet published to Kafka, across tenants', (b) => b.outbox.waiting);
  gauge('outbox_oldest_pending_age_seconds', 'Age of the oldest unpublished outbox row (0 when none)', (b) => b.outbox.oldestAgeSeconds);
  gauge('files_pending_scan', 'Files waiting for their malware scan (pending_scan), across tenants', (b) => b.filesPendingScan.waiting);
  gauge('files_oldest_pending_scan_age_seconds', 'Age of the oldest file waiting for its scan (0 when none)', (b) => b.filesPendingScan.oldestAgeSeconds);
  gauge('audit_fallback_buffered_records', 'Audit records in the intake\'s fallback buffer (Kafka did not answer), waiting to be replayed',
    (b) => b.auditFallback.waiting);
  gauge('audit_fallback_oldest_buffered_age_seconds', 'Age of the oldest record in the audit fallback buffer (0 when none)',
    (b) => b.auditFallback.oldestAgeSeconds);
  new Gauge<'group'>({
    name: 'event_dead_letters_pending',
    help: 'Dead letters waiting for an operator, by platform consumer group; every tenant\'s subscriptions together as group="tenant-subscriptions"',
    labelNames: ['group'], registers: [registry],
    async collect() {
      const current = await reading.current();
      if (!current) return;
      this.reset();
      for (const { group, pending } of current.value.deadLetters) this.set({ group }, pending);
    },
  });
  new Gauge({
    name: 'backlog_gauges_last_read_timestamp_seconds',
    help: 'Unix time of the last good reading of the outbox, dead-letter, scan and audit-buffer gauges (0: none yet); they keep their last values while readings fail',
    registers: [registry],
    async collect() {
      const current = await reading.current();
      if (current) this.set(current.readAt / 1000);
    },
  });
}
