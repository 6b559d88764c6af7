import { AuditIntake } from './record-publisher';
import type { Config } from '../../common/config';
import { createKafka } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import type { AuditDeps } from './deps';

/**
 * Builds what the audit routes share. The intake gets a Kafka client of its own (producer only) and
 * the application pool for its fallback buffer, which platform_app may only insert into.
 */
export function createAuditServices(
  config: Readonly<Config>,
  clients: { db: DatabasePool; analyticsDb: DatabasePool },
  logger: Logger,
): AuditDeps {
  const intake = new AuditIntake({
    kafka: createKafka({ ...config.kafka, clientId: `${config.kafka.clientId}-audit-intake` }, logger),
    bufferDb: clients.db,
    logger,
    settings: { publishTimeoutMs: config.audit.publishTimeoutMs, kafkaRetryMs: config.audit.kafkaRetryMs },
    topic: config.audit.intakeTopic,
  });
  return { config, db: clients.db, analyticsDb: clients.analyticsDb, intake, logger };
}
