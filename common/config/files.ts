import Joi from 'joi';
import { taskQueues } from '../temporal/task-queues';
import { caFile, optional, setting } from './setting';

const MB = 1024 * 1024;

/** The object store (S3 API), the virus scanner files pass through, and the files service's limits. */
export const filesSettings = {
  s3: {
    endPoint: setting('S3_ENDPOINT', Joi.string().default('127.0.0.1')),
    port: setting('S3_PORT', Joi.number().port().default(9000)),
    useSSL: setting('S3_USE_SSL', Joi.boolean().default(false)),
    accessKey: setting('S3_ACCESS_KEY', Joi.string().default('platform')),
    secretKey: setting('S3_SECRET_KEY', Joi.string().default('platform-secret')),
    bucket: setting('S3_BUCKET', Joi.string().pattern(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/).default('platform')),
    region: setting('S3_REGION', Joi.string().default('us-east-1')),
    /** true: https://host/bucket/key (the local store, most S3-compatible ones); false: https://bucket.host/key (AWS). */
    pathStyle: setting('S3_PATH_STYLE', Joi.boolean().default(true)),
    /** The CA of a store whose certificate a private CA signed (none: Node's built-in roots); HTTPS only. */
    caFile: optional('S3_CA_FILE', caFile()
      .when('S3_USE_SSL', { is: true, otherwise: Joi.forbidden() })
      .messages({ 'any.unknown': '{{#label}} is only read with S3_USE_SSL=true' })),
  },
  clamav: {
    host: setting('CLAMAV_HOST', Joi.string().default('127.0.0.1')),
    port: setting('CLAMAV_PORT', Joi.number().port().default(3310)),
  },
  /**
   * docs/reference/files.md#limits. Sizes are configured in MB and kept in bytes. taskQueue is where the
   * gateway starts the scan workflows (tests point it at their own worker).
   */
  files: {
    stagingTtlHours: setting('FILES_STAGING_TTL_HOURS', Joi.number().integer().min(1).max(24 * 30).default(24)),
    stagingMaxPerTenant: setting('FILES_STAGING_MAX_PER_TENANT', Joi.number().integer().min(1).default(100)),
    presignTtlMin: setting('FILES_PRESIGN_TTL_MIN', Joi.number().integer().min(1).max(7 * 24 * 60).default(15)),
    /**
     * The Kafka topic the object store sends its bucket notifications to (scripts/infra/services/s3.sh
     * reads the same variable): the worker's consumer notices presigned PUTs there. Empty: none.
     */
    storeEventsTopic: setting('S3_EVENT_KAFKA_TOPIC', Joi.string().allow('').default('platform.files.store-events')),
    maxImageSizeBytes: setting('FILES_MAX_IMAGE_SIZE_MB', Joi.number().integer().min(1).max(5120).default(10), (mb) => mb * MB),
    maxDocumentSizeBytes: setting('FILES_MAX_DOCUMENT_SIZE_MB', Joi.number().integer().min(1).max(5120).default(50), (mb) => mb * MB),
    imageProcessingTimeoutSec: setting('FILES_IMAGE_PROCESSING_TIMEOUT_SEC', Joi.number().integer().min(1).max(3600).default(30)),
    softDeleteRetentionDays: setting('FILES_SOFT_DELETE_RETENTION_DAYS', Joi.number().integer().min(1).max(3650).default(30)),
    /** The orphan sweep (docs/decisions/files.md, Orphans): unreferenced this long after upload → marked; marked this long → purged. */
    orphanGraceHours: setting('FILES_ORPHAN_GRACE_HOURS', Joi.number().integer().min(1).max(24 * 365).default(24)),
    orphanRetentionDays: setting('FILES_ORPHAN_RETENTION_DAYS', Joi.number().integer().min(1).max(3650).default(30)),
    /**
     * The staging sweep (docs/decisions/files.md, Staging sweep): every N minutes, the scan of a
     * pending_scan file recorded more than the grace ago whose upload never started it.
     */
    stagingSweepMinutes: setting('FILES_STAGING_SWEEP_MINUTES', Joi.number().integer().min(1).max(24 * 60).default(5)),
    stagingSweepGraceMinutes: setting('FILES_STAGING_SWEEP_GRACE_MINUTES', Joi.number().integer().min(1).max(24 * 60).default(5)),
    /** The re-scan (docs/decisions/files.md, Re-scan): how often clamd's version is checked, the pace, how far back. */
    rescanCheckMinutes: setting('FILES_RESCAN_CHECK_MINUTES', Joi.number().integer().min(1).max(7 * 24 * 60).default(60)),
    rescanPerSecond: setting('FILES_RESCAN_PER_SECOND', Joi.number().min(0.1).max(1000).default(5)),
    rescanWindowDays: setting('FILES_RESCAN_WINDOW_DAYS', Joi.number().integer().min(1).max(3650).default(30)),
    /** docs/reference/files.md#rule-21: with more than this many scans waiting, new ones go first (docs/decisions/files.md, Scan priority). */
    scanPriorityThreshold: setting('FILES_SCAN_PRIORITY_THRESHOLD', Joi.number().integer().min(0).default(1000)),
    taskQueue: setting('FILES_TASK_QUEUE', Joi.string().default(taskQueues.files)),
  },
};
