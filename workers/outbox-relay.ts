import { config } from '../common/config';
import { createKafka } from '../common/kafka';
import { createLogger } from '../common/logger';
import { createDbPool } from '../db/pool';
import { OutboxRelay } from './outbox/relay';

/**
 * The outbox relay process (`npm run start:relay`, `node dist/workers/outbox-relay.js`). It is a
 * plain long-running process, not a Temporal workflow: it is one loop over one table, and a workflow
 * history per batch would add cost without adding durability (the table already is the durable state).
 *
 * It connects as the owner role on purpose. The relay is a system process that publishes every
 * tenant's events; row-level security binds platform_app only (the owner owns outbox_events and the
 * table does not FORCE row-level security), so the owner reads across tenants without any bypass
 * setting, while the gateway's role never can.
 *
 * Run two or more for availability: one publishes, the others stand by (see OutboxRelay).
 * SIGTERM or SIGINT: finish the batch in hand, mark it, release the lock and exit 0.
 */
async function main(): Promise<void> {
  const settings = config();
  const logger = createLogger('outbox-relay', settings.logLevel);
  // One connection: the relay's session. The LISTEN connection is a plain pg client of its own.
  const pool = await createDbPool(settings.db.ownerUrl, { maxPoolSize: 1, name: 'outbox-relay' });
  const relay = new OutboxRelay({
    pool, listenUrl: settings.db.ownerUrl, kafka: createKafka(settings.kafka, logger), logger, settings: settings.outbox,
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'stopping after the batch in hand');
      relay.stop();
    });
  }
  await relay.run();
  await pool.end();
}

main().catch((error: unknown) => {
  process.stderr.write(`outbox-relay: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
