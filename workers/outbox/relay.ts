import type { DatabasePoolConnection } from 'slonik';
import type { Config } from '../../common/config';
import type { Kafka } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import {
  deletePublishedOutboxEvents, markOutboxEventsPublished, selectOutboxBacklog, selectPendingOutboxEvents, type PendingOutboxEvent,
} from '../../db/queries/events/outbox.queries';
import { tryLockOutboxRelay, unlockOutboxRelay } from '../../db/queries/events/outbox-relay.queries';
import { OutboxPublisher } from './publisher';
import { backoffDelay, pause } from './timing';
import { OutboxWakeup } from './wakeup';

export interface RelayDeps {
  /** A pool of the owner role; the relay keeps one of its connections for as long as it leads. */
  pool: DatabasePool;
  /** The same database, for the LISTEN connection (slonik cannot receive notifications). */
  listenUrl: string;
  kafka: Kafka;
  logger: Logger;
  settings: Config['outbox'];
}

export interface RelayStatus {
  role: 'starting' | 'standby' | 'leader' | 'stopped';
  /** Events Kafka acknowledged since the process started. */
  published: number;
  /** Publish attempts Kafka refused since the process started; each was followed by a backoff. */
  publishFailures: number;
  lastPublishAt: string | null;
  /** From the last status check (every statusIntervalMs). */
  pending: number | null;
  /** Age of the oldest unpublished row at the last status check. */
  lagMs: number | null;
}

/**
 * Moves committed outbox rows to Kafka, at least once and in seq order.
 *
 * - Exactly one relay publishes: the holder of a session-level advisory lock. Others stand by,
 *   trying the lock every idle poll; when the leader dies its session ends, PostgreSQL releases the
 *   lock, and a standby takes over. Publishing, marking and the lock share one session, so a relay
 *   that lost its session cannot go on marking rows.
 * - A batch is marked published only after Kafka acknowledged all of it; a crash in between
 *   republishes the batch, and consumers de-duplicate by event id.
 * - While Kafka is unavailable the rows stay where they are and the relay retries with bounded
 *   exponential backoff, counting failures; nothing is dropped.
 * - Published rows older than settings.retentionHours are deleted in batches at each status check.
 */
export class OutboxRelay {
  private readonly stopping = new AbortController();
  private readonly publisher: OutboxPublisher;
  private readonly wakeup: OutboxWakeup;
  /** Consecutive batches Kafka refused; sets the backoff. */
  private kafkaFailures = 0;
  /** performance.now() when the last batch was marked published (see linger). */
  private lastBatchAt = -Infinity;
  private readonly state: RelayStatus = {
    role: 'starting', published: 0, publishFailures: 0, lastPublishAt: null, pending: null, lagMs: null,
  };

  constructor(private readonly deps: RelayDeps) {
    this.publisher = new OutboxPublisher(deps.kafka);
    this.wakeup = new OutboxWakeup(deps.listenUrl, deps.logger);
  }

  status(): Readonly<RelayStatus> {
    return { ...this.state };
  }

  /** Asks run() to return after the batch in hand is published and marked. */
  stop(): void {
    this.stopping.abort();
  }

  /** Runs until stop(). Database and broker failures are logged and outlasted, never thrown. */
  async run(): Promise<void> {
    const { logger, settings } = this.deps;
    let sessionFailures = 0;
    while (!this.stopped) {
      try {
        await this.deps.pool.connect((session) => this.serve(session));
        sessionFailures = 0;
      } catch (error) {
        if (this.stopped) break;
        sessionFailures += 1;
        this.state.role = 'starting';
        const delayMs = backoffDelay(sessionFailures, settings.backoffInitialMs, settings.backoffMaxMs);
        logger.error({ err: error, attempt: sessionFailures, delayMs }, 'relay lost its database session; rejoining the election');
        await pause(delayMs, this.stopping.signal);
      }
    }
    this.state.role = 'stopped';
    await Promise.all([this.publisher.reset(), this.wakeup.close()]);
    logger.info(this.status(), 'relay stopped');
  }

  private get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  private async serve(session: DatabasePoolConnection): Promise<void> {
    if (!(await this.becomeLeader(session))) return;
    try {
      await this.publishUntilStopped(session);
    } finally {
      // Fails only when the session is already gone, and then PostgreSQL has released the lock.
      await unlockOutboxRelay(session).catch(() => undefined);
    }
  }

  private async becomeLeader(session: DatabasePoolConnection): Promise<boolean> {
    let announced = false;
    while (!this.stopped) {
      if (await tryLockOutboxRelay(session)) {
        this.state.role = 'leader';
        this.deps.logger.info('relay is the leader; publishing');
        return true;
      }
      if (!announced) {
        this.state.role = 'standby';
        this.deps.logger.info('another relay is the leader; standing by');
        announced = true;
      }
      await pause(this.deps.settings.idlePollMs, this.stopping.signal);
    }
    return false;
  }

  private async publishUntilStopped(session: DatabasePoolConnection): Promise<void> {
    const { settings } = this.deps;
    this.wakeup.listen();
    let nextStatusAt = 0;
    while (!this.stopped) {
      if (Date.now() >= nextStatusAt) {
        await this.reportAndTidy(session);
        nextStatusAt = Date.now() + settings.statusIntervalMs;
      }
      this.wakeup.reset();
      const batch = await selectPendingOutboxEvents(session, settings.batchSize);
      if (batch.length > 0) {
        if (!(await this.publishBatch(session, batch))) continue;
        // A full batch leaves more behind: read on at once.
        if (batch.length === settings.batchSize) continue;
      }
      // Rows committed since the read above have already notified, and this returns at once.
      const notified = await this.wakeup.wait(settings.idlePollMs, this.stopping.signal);
      if (notified) await this.linger();
    }
  }

  /**
   * Keeps lingerMs between one batch and the next read, like a producer's linger.ms: under a steady
   * stream of commits the ones of that time join one batch (one Kafka request, one marking, one
   * fetch for each consumer) instead of leaving one each. A commit after a quiet spell of lingerMs
   * or more leaves at once, so pacing costs latency only under load.
   */
  private async linger(): Promise<void> {
    const remainingMs = this.lastBatchAt + this.deps.settings.lingerMs - performance.now();
    if (remainingMs > 0) await pause(remainingMs, this.stopping.signal);
  }

  /** Publishes and marks one batch; false when Kafka refused it (the rows stay, after a backoff). */
  private async publishBatch(session: DatabasePoolConnection, batch: readonly PendingOutboxEvent[]): Promise<boolean> {
    const { logger, settings } = this.deps;
    try {
      await this.publisher.publish(batch);
    } catch (error) {
      this.kafkaFailures += 1;
      this.state.publishFailures += 1;
      const delayMs = backoffDelay(this.kafkaFailures, settings.backoffInitialMs, settings.backoffMaxMs);
      logger.warn(
        { err: error, attempt: this.kafkaFailures, delayMs, batchSize: batch.length, publishFailures: this.state.publishFailures },
        'kafka did not acknowledge the batch; rows kept, retrying after backoff',
      );
      await this.publisher.reset();
      await pause(delayMs, this.stopping.signal);
      return false;
    }
    this.kafkaFailures = 0;
    // Only after the acknowledgement: a crash before this line republishes the batch (at least once).
    await markOutboxEventsPublished(session, batch.map((row) => row.seq));
    this.state.published += batch.length;
    this.state.lastPublishAt = new Date().toISOString();
    this.lastBatchAt = performance.now();
    logger.info(
      { batchSize: batch.length, firstSeq: batch[0].seq, lastSeq: batch.at(-1)!.seq, lagMs: ageMs(batch[0].occurredAt) },
      'published batch',
    );
    return true;
  }

  /** The metric-like status line, then the deletion of old published rows. */
  private async reportAndTidy(session: DatabasePoolConnection): Promise<void> {
    const { logger, settings } = this.deps;
    const backlog = await selectOutboxBacklog(session);
    this.state.pending = backlog.pending;
    this.state.lagMs = backlog.oldestPendingAt ? ageMs(backlog.oldestPendingAt) : 0;
    logger.info(this.status(), 'outbox status');

    // In slices, so a large backlog of old rows never holds long locks.
    let deleted = 0;
    let slice: number;
    do {
      slice = await deletePublishedOutboxEvents(session, settings.retentionHours, settings.batchSize);
      deleted += slice;
    } while (slice === settings.batchSize && !this.stopped);
    if (deleted > 0) logger.info({ deleted, retentionHours: settings.retentionHours }, 'deleted old published outbox rows');
  }
}

function ageMs(isoTimestamp: string): number {
  return Math.max(0, Date.now() - Date.parse(isoTimestamp));
}
