import { auditMessage } from '../../services/audit/record-publisher';
import { topics } from '../../services/events/topics';
import { ReconnectingProducer, type Kafka } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import {
  claimBufferedAuditEvents, deleteBufferedAuditEvents, selectAuditBufferBacklog,
} from '../../db/queries/audit/audit-fallback.queries';
import { pause } from '../outbox/timing';

export interface FallbackReplayDeps {
  /** The owner role's pool: the buffer is read and emptied by the system process only. */
  pool: DatabasePool;
  kafka: Kafka;
  logger: Logger;
  settings: { intervalMs: number; batchSize: number; alarmAfterDays: number };
  topic?: string;
}

/**
 * Empties the fallback buffer into Kafka every intervalMs (docs/reference/audit.md#rule-3: every 30 seconds). Each batch
 * is claimed FOR UPDATE SKIP LOCKED, sent, and deleted in the same transaction once Kafka acknowledged
 * it: a failed send rolls back and the rows wait for the next round, and a crash after the send but
 * before the commit sends them again, which the consumer absorbs by record id. Rows are never dropped
 * by age; one still waiting after alarmAfterDays (docs/decisions/audit.md: the buffer promises 7 days) is logged as an
 * error every round, because the outage has outlasted what the buffer promises.
 */
export class AuditFallbackReplayer {
  private readonly producer: ReconnectingProducer;
  private readonly stopping = new AbortController();

  constructor(private readonly deps: FallbackReplayDeps) {
    this.producer = new ReconnectingProducer(deps.kafka);
  }

  stop(): void {
    this.stopping.abort();
  }

  /** Replays at once, then every intervalMs until stop(). */
  async run(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      await this.replayOnce().catch((error: unknown) => {
        this.deps.logger.warn({ err: error }, 'audit fallback replay failed; retrying next round');
      });
      // Also (above all) while Kafka is down: that is when the buffer grows old.
      await this.alarmIfTooOld().catch((error: unknown) => {
        this.deps.logger.warn({ err: error }, 'cannot read the audit fallback buffer backlog');
      });
      await pause(this.deps.settings.intervalMs, this.stopping.signal);
    }
    await this.producer.reset();
  }

  /** Sends everything buffered, batch by batch; returns how many records went to Kafka. */
  async replayOnce(): Promise<number> {
    const { pool, logger, settings } = this.deps;
    const topic = this.deps.topic ?? topics.audit.name;
    let replayed = 0;
    for (;;) {
      const sent = await pool.transaction(async (tx) => {
        const events = await claimBufferedAuditEvents(tx, settings.batchSize);
        if (events.length === 0) return 0;
        try {
          await this.producer.send(events.map((event) => auditMessage(event, topic)));
        } catch (error) {
          await this.producer.reset();
          throw error;
        }
        await deleteBufferedAuditEvents(tx, events.map(({ envelope }) => envelope.id));
        return events.length;
      });
      if (sent === 0) break;
      replayed += sent;
    }
    if (replayed > 0) logger.info({ replayed }, 'audit fallback buffer replayed to Kafka');
    return replayed;
  }

  private async alarmIfTooOld(): Promise<void> {
    const { buffered, oldestBufferedAt } = await selectAuditBufferBacklog(this.deps.pool);
    const ageDays = oldestBufferedAt ? (Date.now() - Date.parse(oldestBufferedAt)) / 86_400_000 : 0;
    if (ageDays > this.deps.settings.alarmAfterDays) {
      this.deps.logger.error({ buffered, oldestBufferedAt }, 'audit fallback buffer holds records older than its promised capacity');
    }
  }
}
