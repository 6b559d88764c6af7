import type { Client as MinioClient } from 'minio';
import type { Config } from '../../common/config';
import { createKafka, type Admin } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import { createS3Client } from '../../common/object-store';
import { createRedis, type Redis } from '../../common/redis';
import { createDbPool, type DatabasePool } from '../../db/pool';
import { TenantReader } from '../../db/tenant-reads';

/** The clients of the core services, created without waiting for any of them to answer. */
export interface Connections {
  db: DatabasePool;
  /** The same database for tenant reads in one round trip. */
  tenantReads: TenantReader;
  /** The reporting connection for audit queries and usage history; every transaction is read-only. */
  analyticsDb: DatabasePool;
  redis: Redis;
  kafkaAdmin: Admin;
  s3: MinioClient;
}

/**
 * Adds `default_transaction_read_only=on` to the connection's start-up options, so a write sent
 * down the reporting connection fails whatever URL it is configured with. This is a guard against
 * mistakes, not a permission: production should also point it at a replica or a read-only role.
 */
export function readOnlyDsn(url: string): string {
  const dsn = new URL(url);
  const options = [dsn.searchParams.get('options'), '-c default_transaction_read_only=on'].filter(Boolean).join(' ');
  dsn.searchParams.set('options', options);
  return dsn.toString();
}

export async function openConnections(config: Readonly<Config>, logger: Logger): Promise<Connections> {
  const db = await createDbPool(config.db.url, { maxPoolSize: config.db.poolSize, name: 'app' });
  const tenantReads = await TenantReader.open(config.db.url, db, config.db.poolSize);
  const analyticsDb = await createDbPool(readOnlyDsn(config.db.analyticsUrl), { maxPoolSize: 5, name: 'analytics' });

  // Commands fail at once while Redis is unreachable instead of queueing: callers (rate limits,
  // the health check) must not wait for a reconnect that may never come.
  const redis = createRedis(config.redis, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: config.health.checkTimeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  let lastRedisError: string | undefined;
  redis.on('error', (error: Error) => {
    // ioredis reports every failed reconnect; one line per distinct failure is enough.
    if (error.message !== lastRedisError) logger.warn({ err: error }, 'redis connection error');
    lastRedisError = error.message;
  });
  redis.on('ready', () => {
    lastRedisError = undefined;
    logger.info('redis ready');
  });

  // The admin client answers health checks: no retries of its own, so a dead broker shows at once.
  const kafkaAdmin = createKafka({ ...config.kafka, clientId: `${config.kafka.clientId}-api` }, logger)
    .admin({ retry: { retries: 0 } });

  const s3 = createS3Client(config.s3);

  return { db, tenantReads, analyticsDb, redis, kafkaAdmin, s3 };
}

export async function closeConnections(connections: Connections): Promise<void> {
  const { db, tenantReads, analyticsDb, redis, kafkaAdmin } = connections;
  redis.disconnect();
  await Promise.allSettled([db.end(), tenantReads.end(), analyticsDb.end(), kafkaAdmin.disconnect()]);
}
