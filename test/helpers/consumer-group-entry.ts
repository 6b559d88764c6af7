import { config } from '../../common/config';
import { createKafka } from '../../common/kafka';
import { createLogger } from '../../common/logger';
import { createDbPool, sql } from '../../db/pool';
import { GroupConsumer } from '../../services/events/consumers/group-consumer';
import { testConsumerSettings, writeEffect } from './consumer-groups';

/**
 * One member of a platform consumer group in a process of its own, for the crash test
 * (test/integration/consumer-crash.int.test.ts), which SIGKILLs it in the middle of a batch. Its
 * handler writes the effect of each event (test/helpers/consumer-groups.ts); from the
 * `stallAfter`-th delivery on it then waits, inside the delivery's transaction, for the advisory
 * lock `stallLock`, which the test holds: the member stalls in the middle of its batch with
 * `stallAfter - 1` effects committed and its transactions open, however fast the machine, until the
 * test kills it. Arguments: topic, group id, the application role's database URL, stallAfter,
 * stallLock. Logs `consumer group member joined` once it has joined its group.
 */
async function main(): Promise<void> {
  const [topic, groupId, databaseUrl, stallAfter, stallLock] = process.argv.slice(2);
  let deliveries = 0;
  const cfg = config();
  const logger = createLogger('consumer-crash-member', 'info');
  const db = await createDbPool(databaseUrl, { name: 'consumer-crash-member', maxPoolSize: 4 });
  const consumer = new GroupConsumer({
    kafka: createKafka(cfg.kafka, logger), db, logger, groupId, topic, tenantId: null, accepts: () => true, fromBeginning: true,
    settings: testConsumerSettings, partitionsConcurrently: 3,
    // Offsets stay uncommitted for the whole batch: the kill leaves handled events for the next member.
    commitEvery: 100_000,
    // The group's smallest wait for a member gone silent: the test's successor takes over sooner.
    sessionTimeoutMs: 6000,
    handler: {
      kind: 'transactional',
      handle: async (delivery, tx) => {
        await writeEffect(tx, groupId, delivery);
        deliveries += 1;
        if (deliveries >= Number(stallAfter)) {
          // Stalled until the kill, not until the pool's statement timeout.
          await tx.query(sql.unsafe`SET LOCAL statement_timeout = 0`);
          await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${Number(stallLock)})`);
        }
      },
    },
  });
  process.once('SIGTERM', () => { void consumer.stop().then(() => db.end()); });
  await consumer.start();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
