import { config } from '../../common/config';
import { createKafka } from '../../common/kafka';
import { createLogger } from '../../common/logger';
import { createDbPool } from '../../db/pool';
import type { AuditRecord } from '../../services/audit/record';
import { AuditStore, type AppendResult } from '../../services/audit/store';
import { AuditConsumer } from '../../workers/audit/consumer';

/**
 * One audit consumer replica in a process of its own, assembled as workers/audit-consumer.ts assembles
 * it (the owner role's pool, the store, the consumer) but on the topic and group a test names, so the
 * platform's running consumers never see the test's records (test/integration/replicas-audit.int.test.ts).
 * It runs no fallback replayer: the buffer has no topic column, so a replayer on the shared database
 * would take every file's buffered records into this test's topic, which is deleted afterwards; the
 * platform's own audit consumer replays the shared buffer, and replicas-audit tests two replayers on a
 * scratch database in-process. Each chunk's outcome is logged (`audit chunk stored`
 * with stored and duplicates), which is how the test sees a replica drop a redelivered record.
 * With `stall` it stops after the first chunk that stored a record, before returning it to the
 * consumer: the records are committed in the store and their offsets are not, the window a crash
 * hands to the group's other member; the test kills it there.
 * Arguments: topic, group id, `stall` or `run`. Logs `audit consumer joined its group` on each join.
 */
const CHUNK_STORED = 'audit chunk stored';
const STALLED = 'stalled with a chunk stored and its offsets uncommitted';

async function main(): Promise<void> {
  const [topic, groupId, mode] = process.argv.slice(2);
  const cfg = config();
  const logger = createLogger('audit-consumer-replica', 'info');
  const pool = await createDbPool(cfg.db.ownerUrl, { maxPoolSize: 5, name: 'audit-consumer-replica' });
  const kafka = createKafka(cfg.kafka, logger);

  class ObservedStore extends AuditStore {
    override async append(records: readonly AuditRecord[]): Promise<AppendResult> {
      const result = await super.append(records);
      logger.info(result, CHUNK_STORED);
      if (mode === 'stall' && result.stored > 0) {
        logger.info(STALLED);
        await new Promise<never>(() => undefined);
      }
      return result;
    }
  }

  const consumer = new AuditConsumer({
    kafka, store: new ObservedStore(pool), logger, topic, settings: { groupId, chunkSize: 100, partitionsConcurrently: 3 },
  });
  await consumer.start();
  process.once('SIGTERM', () => {
    void consumer.stop().then(() => pool.end());
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
