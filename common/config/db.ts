import Joi from 'joi';
import { caFile, optional, setting } from './setting';

/** DATABASE_SSL_MODE, as libpq names the modes (db/pg-ssl.ts gives each its meaning). */
export type DatabaseSslMode = 'disable' | 'require' | 'verify-ca' | 'verify-full';

const VERIFYING_MODES = ['verify-ca', 'verify-full'];

/**
 * TLS comes from DATABASE_SSL_MODE alone: node-postgres lets a URL's sslmode (and sslrootcert, ...)
 * override the ssl option it is given, and reads `require` as verify-full, so a URL that set them
 * would silently change what DATABASE_SSL_MODE says.
 */
const postgresUrl = () => Joi.string().uri({ scheme: ['postgres', 'postgresql'] }).custom((url: string, helpers) => {
  const tlsParameters = [...new URL(url).searchParams.keys()].filter((name) => name.toLowerCase().startsWith('ssl'));
  return tlsParameters.length === 0 ? url
    : helpers.message({ custom: `{{#label}} must not set ${tlsParameters.join(', ')}: DATABASE_SSL_MODE and DATABASE_SSL_CA_FILE set TLS for every connection` });
});

/** PostgreSQL (the application role, the owner role, the read-only reporting connection), Redis, and their housekeeping. */
export const dbSettings = {
  /** analyticsUrl: the read-only reporting connection (audit queries, usage history). */
  db: {
    url: setting('DATABASE_URL', postgresUrl().default('postgres://platform_app:platform_app@127.0.0.1:5432/platform')),
    ownerUrl: setting('DATABASE_OWNER_URL', postgresUrl().default('postgres://platform_owner:platform_owner@127.0.0.1:5432/platform')),
    poolSize: setting('DATABASE_POOL_SIZE', Joi.number().integer().min(1).max(200).default(10)),
    analyticsUrl: setting('ANALYTICS_DATABASE_URL', postgresUrl().default('postgres://platform_app:platform_app@127.0.0.1:5432/platform')),
    /**
     * TLS of every PostgreSQL connection (the slonik pools, the pipelined reads, the LISTEN connections,
     * the migration runner): db/pg-ssl.ts turns it into node-postgres's ssl option. The CA file is what
     * verify-ca and verify-full check the server's certificate against; the other modes check none, so
     * a CA file beside them is refused rather than ignored.
     */
    ssl: {
      mode: setting('DATABASE_SSL_MODE', Joi.string<DatabaseSslMode>().valid('disable', 'require', ...VERIFYING_MODES).default('disable')),
      caFile: optional('DATABASE_SSL_CA_FILE', caFile()
        .when('DATABASE_SSL_MODE', { is: Joi.valid(...VERIFYING_MODES), then: Joi.required(), otherwise: Joi.forbidden() })
        .messages({
          'any.required': '{{#label}} is required with DATABASE_SSL_MODE=verify-ca or verify-full (the CA of the server\'s certificate)',
          'any.unknown': '{{#label}} is only read with DATABASE_SSL_MODE=verify-ca or verify-full',
        })),
    },
  },
  /** url: redis:// or rediss:// (TLS); tlsCaFile: the CA of a rediss:// server (none: Node's built-in roots). */
  redis: {
    url: setting('REDIS_URL', Joi.string().uri({ scheme: ['redis', 'rediss'] }).default('redis://127.0.0.1:6379/0')),
    tlsCaFile: optional('REDIS_TLS_CA_FILE', caFile()
      .when('REDIS_URL', { is: Joi.string().pattern(/^rediss:/i), otherwise: Joi.forbidden() })
      .messages({ 'any.unknown': '{{#label}} is only read with a rediss:// REDIS_URL' })),
  },
  /** The maintenance Schedule: how long idempotency keys are kept, how often it runs, rows per batch. */
  maintenance: {
    idempotencyKeyTtlHours: setting('IDEMPOTENCY_KEY_TTL_HOURS', Joi.number().integer().min(1).default(24)),
    intervalMinutes: setting('MAINTENANCE_INTERVAL_MINUTES', Joi.number().integer().min(1).default(15)),
    batchSize: setting('MAINTENANCE_BATCH_SIZE', Joi.number().integer().min(1).max(50_000).default(5000)),
  },
};
