import Joi from 'joi';
import { taskQueues } from '../temporal/task-queues';
import { setting } from './setting';

/** Kafka and the outbox relay that publishes to it. */
export const eventsSettings = {
  kafka: {
    brokers: setting('KAFKA_BROKERS', Joi.string().pattern(/^[^,\s]+:\d+(,[^,\s]+:\d+)*$/).default('127.0.0.1:9092'), (list) => list.split(',')),
    clientId: setting('KAFKA_CLIENT_ID', Joi.string().default('platform')),
    retentionHours: setting('BROKER_RETENTION_HOURS', Joi.number().integer().min(1).default(168)),
    auditRetentionHours: setting('BROKER_AUDIT_RETENTION_HOURS', Joi.number().integer().min(1).default(720)),
    partitions: setting('BROKER_PARTITIONS', Joi.number().integer().min(1).max(128).default(6)),
  },
  /**
   * The relay: rows per batch, idle poll (LISTEN wakes it sooner), the linger (least time between batches),
   * bounded backoff while Kafka is down, how often it logs its status and deletes published rows
   * older than retentionHours.
   */
  outbox: {
    batchSize: setting('OUTBOX_BATCH_SIZE', Joi.number().integer().min(1).max(5000).default(500)),
    idlePollMs: setting('OUTBOX_IDLE_POLL_MS', Joi.number().integer().min(10).max(60_000).default(1000)),
    lingerMs: setting('OUTBOX_LINGER_MS', Joi.number().integer().min(0).max(1000).default(100)),
    backoffInitialMs: setting('OUTBOX_BACKOFF_INITIAL_MS', Joi.number().integer().min(10).max(60_000).default(250)),
    backoffMaxMs: setting('OUTBOX_BACKOFF_MAX_MS', Joi.number().integer().min(10).max(600_000).default(30_000)),
    statusIntervalMs: setting('OUTBOX_STATUS_INTERVAL_MS', Joi.number().integer().min(100).max(3_600_000).default(30_000)),
    retentionHours: setting('OUTBOX_RETENTION_HOURS', Joi.number().integer().min(1).default(168)),
  },
  /**
   * Publishing through the bus (REST): how long a publish may wait for the broker (connection and
   * acknowledgement) before answering 503, how long a gateway reuses an event type's schema, and how
   * long an Idempotency-Key is kept (document 3, Limits: 24 hours).
   */
  eventBus: {
    publishTimeoutMs: setting('EVENTS_PUBLISH_TIMEOUT_MS', Joi.number().integer().min(100).max(30_000).default(1000)),
    schemaCacheTtlMs: setting('EVENTS_SCHEMA_CACHE_TTL_MS', Joi.number().integer().min(0).max(3_600_000).default(30_000)),
    idempotencyTtlHours: setting('EVENTS_IDEMPOTENCY_TTL_HOURS', Joi.number().integer().min(1).default(24)),
  },
  /**
   * Consumer groups (document 3, Events 2 and 4, Limits): how often a handler is tried before its
   * event is dead-lettered, how long a non-financial event id is remembered for de-duplication
   * (money.* forever), how long a dead letter can be retried, after how many dead-letterings of one
   * event replay-all leaves it alone (the loop guard), and replay-all's throttle.
   */
  consumers: {
    maxAttempts: setting('BROKER_MAX_ATTEMPTS', Joi.number().integer().min(1).max(100).default(5)),
    retryBackoffMs: setting('BROKER_RETRY_BACKOFF_MS', Joi.number().integer().min(0).max(60_000).default(200)),
    dedupHours: setting('EVENTS_DEDUP_HOURS', Joi.number().integer().min(1).default(24)),
    dlqRetentionHours: setting('EVENTS_DLQ_RETENTION_HOURS', Joi.number().integer().min(1).default(168)),
    dlqQuarantineAfter: setting('EVENTS_DLQ_QUARANTINE_AFTER', Joi.number().integer().min(1).max(100).default(3)),
    dlqReplayPerSecond: setting('EVENTS_DLQ_REPLAY_PER_SECOND', Joi.number().integer().min(1).max(1000).default(50)),
    /** How long a Consume stream (the SDK's subscribe) waits for an event's acknowledgement before it counts the attempt failed. */
    ackTimeoutMs: setting('EVENTS_CONSUME_ACK_TIMEOUT_MS', Joi.number().integer().min(100).max(3_600_000).default(30_000)),
  },
  /** Where the events domain's workflows run (replay-all of dead letters); tests point a gateway at their own worker's. */
  eventsWorkflows: {
    taskQueue: setting('EVENTS_TASK_QUEUE', Joi.string().default(taskQueues.events)),
  },
  /**
   * Consumer lag on the gateway's /metrics (document 3, Events 5 and 6): how often the gateway samples
   * its groups' offsets from the Kafka admin, and how long lag alerts stay quiet after a ReplayFrom
   * that pushed a group's lag over 100 000 messages (a bulk import).
   */
  consumerLag: {
    sampleIntervalMs: setting('EVENTS_LAG_SAMPLE_MS', Joi.number().integer().min(1000).max(600_000).default(15_000)),
    bulkImportSuppressMinutes: setting('BROKER_BULK_IMPORT_SUPPRESS_MINUTES', Joi.number().integer().min(0).max(1440).default(30)),
  },
};
