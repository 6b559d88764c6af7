import Joi from 'joi';
import { setting } from './setting';

/** The audit pipeline and its hot and cold storage (docs/reference/audit.md). */
export const auditSettings = {
  /**
   * The audit pipeline: the consumer's group, records per store transaction and partitions consumed
   * at once; the direct intake's Kafka deadline and how long it then writes straight to the fallback
   * buffer; the buffer's replay interval, batch and promised capacity (older rows raise an alarm).
   */
  audit: {
    consumerGroup: setting('AUDIT_CONSUMER_GROUP', Joi.string().default('audit.store')),
    chunkSize: setting('AUDIT_CONSUMER_CHUNK_SIZE', Joi.number().integer().min(1).max(10_000).default(1000)),
    partitionsConcurrently: setting('AUDIT_CONSUMER_CONCURRENCY', Joi.number().integer().min(1).max(64).default(3)),
    publishTimeoutMs: setting('AUDIT_PUBLISH_TIMEOUT_MS', Joi.number().integer().min(100).max(60_000).default(2000)),
    kafkaRetryMs: setting('AUDIT_KAFKA_RETRY_MS', Joi.number().integer().min(0).max(600_000).default(5000)),
    replayIntervalMs: setting('AUDIT_FALLBACK_REPLAY_INTERVAL_MS', Joi.number().integer().min(100).max(3_600_000).default(30_000)),
    replayBatchSize: setting('AUDIT_FALLBACK_BATCH_SIZE', Joi.number().integer().min(1).max(5000).default(500)),
    bufferRetentionDays: setting('AUDIT_FALLBACK_RETENTION_DAYS', Joi.number().integer().min(1).default(7)),
    statusIntervalMs: setting('AUDIT_STATUS_INTERVAL_MS', Joi.number().integer().min(100).max(3_600_000).default(30_000)),
    /** The REST intake's topic (tests send to their own); the anonymization lock and readers' wait for it. */
    intakeTopic: setting('AUDIT_INTAKE_TOPIC', Joi.string().pattern(/^[A-Za-z0-9._-]+$/).default('platform.audit.events')),
    anonymizeLockSeconds: setting('AUDIT_ANONYMIZE_LOCK_SECONDS', Joi.number().integer().min(1).max(3600).default(60)),
    anonymizePollMs: setting('AUDIT_ANONYMIZE_POLL_MS', Joi.number().integer().min(10).max(10_000).default(100)),
    anonymizeWaitMs: setting('AUDIT_ANONYMIZE_WAIT_MS', Joi.number().integer().min(0).max(60_000).default(5000)),
    /** Whether the gateway writes audit.api.called, and how long it collects them before one send. */
    requestEnabled: setting('AUDIT_REQUEST_ENABLED', Joi.boolean().default(true)),
    requestFlushMs: setting('AUDIT_REQUEST_FLUSH_MS', Joi.number().integer().min(1).max(10_000).default(100)),
  },
  /**
   * Hot and cold audit storage: records stay in PostgreSQL for hotDays, then whole months move to
   * the object store (the retention Schedule runs every retentionIntervalHours) and are deleted after
   * coldYears. Cold exports are kept exportRetentionDays and handed out by presigned URLs valid
   * exportUrlTtlSeconds; taskQueue is where the gateway starts them (tests point it at their worker).
   */
  auditStorage: {
    hotDays: setting('AUDIT_HOT_DAYS', Joi.number().integer().min(1).max(3650).default(90)),
    coldYears: setting('AUDIT_COLD_YEARS', Joi.number().integer().min(1).max(100).default(7)),
    retentionIntervalHours: setting('AUDIT_RETENTION_INTERVAL_HOURS', Joi.number().integer().min(1).max(24 * 31).default(24)),
    exportRetentionDays: setting('AUDIT_EXPORT_RETENTION_DAYS', Joi.number().integer().min(1).max(365).default(7)),
    exportUrlTtlSeconds: setting('AUDIT_EXPORT_URL_TTL_SECONDS', Joi.number().integer().min(1).max(86_400).default(300)),
    taskQueue: setting('AUDIT_TASK_QUEUE', Joi.string().default('platform.audit')),
  },
};
