import Joi from 'joi';
import { setting } from './setting';

const postgresUrl = () => Joi.string().uri({ scheme: ['postgres', 'postgresql'] });

/** PostgreSQL (the application role, the owner role, the read-only reporting connection), Redis, and their housekeeping. */
export const dbSettings = {
  /** analyticsUrl: the read-only reporting connection (audit queries, usage history). */
  db: {
    url: setting('DATABASE_URL', postgresUrl().default('postgres://platform_app:platform_app@127.0.0.1:5432/platform')),
    ownerUrl: setting('DATABASE_OWNER_URL', postgresUrl().default('postgres://platform_owner:platform_owner@127.0.0.1:5432/platform')),
    poolSize: setting('DATABASE_POOL_SIZE', Joi.number().integer().min(1).max(200).default(10)),
    analyticsUrl: setting('ANALYTICS_DATABASE_URL', postgresUrl().default('postgres://platform_app:platform_app@127.0.0.1:5432/platform')),
  },
  redis: { url: setting('REDIS_URL', Joi.string().uri({ scheme: ['redis', 'rediss'] }).default('redis://127.0.0.1:6379/0')) },
  /** The maintenance Schedule: how long idempotency keys are kept, how often it runs, rows per batch. */
  maintenance: {
    idempotencyKeyTtlHours: setting('IDEMPOTENCY_KEY_TTL_HOURS', Joi.number().integer().min(1).default(24)),
    intervalMinutes: setting('MAINTENANCE_INTERVAL_MINUTES', Joi.number().integer().min(1).default(15)),
    batchSize: setting('MAINTENANCE_BATCH_SIZE', Joi.number().integer().min(1).max(50_000).default(5000)),
  },
};
