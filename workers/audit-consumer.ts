import { config } from '../common/config';
import { createKafka } from '../common/kafka';
import { createLogger } from '../common/logger';
import { createDbPool } from '../db/pool';
import { selectAuditBufferBacklog } from '../db/queries/audit/audit-fallback.queries';
import { AuditConsumer } from './audit/consumer';
import { AuditFallbackReplayer } from './audit/fallback-replay';
import { AuditStore } from '../services/audit/store';

/**
 * The audit consumer process (`node dist/workers/audit-consumer.js`): stores the records of
 * platform.audit.events in the hash-chained store (consumer group audit.store) and replays the
 * direct intake's fallback buffer to Kafka every 30 s. Like the outbox relay it is a plain
 * long-running process connected as the owner role: a system process writing every tenant's
 * records, which platform_app can never do. Run several for throughput or availability: Kafka
 * shares the partitions among them, the chain head locks keep each tenant's chain sound, and the
 * buffer's rows are claimed with SKIP LOCKED.
 *
 * SIGTERM or SIGINT: leave the group after the chunk in hand, stop replaying, exit 0.
 */
async function main(): Promise<void> {
  const cfg = config();
  const settings = cfg.audit;
  const logger = createLogger('audit-consumer', cfg.logLevel);
  // One connection per concurrently consumed partition, one for partition DDL and the replayer.
  const pool = await createDbPool(cfg.db.ownerUrl, { maxPoolSize: settings.partitionsConcurrently + 2, name: 'audit-consumer' });
  const kafka = createKafka(cfg.kafka, logger);
  const store = new AuditStore(pool);
  // This month and the next exist before the first record of either arrives (see docs/decisions/audit.md).
  const now = new Date();
  await store.ensurePartitions([now, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))]
    .map((date) => ({ timestamp: date.toISOString() })));

  const consumer = new AuditConsumer({
    kafka, store, logger,
    settings: { groupId: settings.consumerGroup, chunkSize: settings.chunkSize, partitionsConcurrently: settings.partitionsConcurrently },
  });
  const replayer = new AuditFallbackReplayer({
    pool, kafka, logger,
    settings: { intervalMs: settings.replayIntervalMs, batchSize: settings.replayBatchSize, alarmAfterDays: settings.bufferRetentionDays },
  });
  const statusTimer = setInterval(() => {
    selectAuditBufferBacklog(pool)
      .then((backlog) => logger.info({ ...consumer.status(), ...backlog }, 'audit consumer status'))
      .catch((error: unknown) => logger.warn({ err: error }, 'audit consumer status unavailable'));
  }, settings.statusIntervalMs);

  await consumer.start();
  const replaying = replayer.run();
  await new Promise<void>((resolve) => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        logger.info({ signal }, 'stopping after the chunk in hand');
        resolve();
      });
    }
  });
  clearInterval(statusTimer);
  replayer.stop();
  await Promise.all([consumer.stop(), replaying]);
  await pool.end();
  logger.info(consumer.status(), 'audit consumer stopped');
}

main().catch((error: unknown) => {
  process.stderr.write(`audit-consumer: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
