import Joi from 'joi';
import { taskQueues } from '../temporal/task-queues';
import { caFile, optional, setting } from './setting';

/** KAFKA_SASL_MECHANISM, as kafkajs names the mechanisms. */
export type KafkaSaslMechanism = 'scram-sha-256' | 'scram-sha-512' | 'plain';

const SASL_MECHANISMS: KafkaSaslMechanism[] = ['scram-sha-256', 'scram-sha-512', 'plain'];

/**
 * The SCRAM user scripts/infra/services/kafka.sh creates on the local broker's SASL_SSL listener
 * (127.0.0.1:9094). Its password is public (it is in the script and .env.example): production refuses
 * it (common/config/production.ts).
 */
export const LOCAL_KAFKA_SASL = { username: 'platform', password: 'platform-kafka-secret' } as const;

/** A username or password: required with a mechanism, refused without one (it would be sent nowhere). */
const saslCredential = () => Joi.string()
  .when('KAFKA_SASL_MECHANISM', { is: Joi.string().valid(...SASL_MECHANISMS).required(), then: Joi.required(), otherwise: Joi.forbidden() })
  .messages({
    'any.required': '{{#label}} is required with KAFKA_SASL_MECHANISM',
    'any.unknown': '{{#label}} is only read with KAFKA_SASL_MECHANISM (scram-sha-256, scram-sha-512 or plain)',
  });

/** Kafka and the outbox relay that publishes to it. */
export const eventsSettings = {
  kafka: {
    brokers: setting('KAFKA_BROKERS', Joi.string().pattern(/^[^,\s]+:\d+(,[^,\s]+:\d+)*$/).default('127.0.0.1:9092'), (list) => list.split(',')),
    clientId: setting('KAFKA_CLIENT_ID', Joi.string().default('platform')),
    retentionHours: setting('BROKER_RETENTION_HOURS', Joi.number().integer().min(1).default(168)),
    auditRetentionHours: setting('BROKER_AUDIT_RETENTION_HOURS', Joi.number().integer().min(1).default(720)),
    partitions: setting('BROKER_PARTITIONS', Joi.number().integer().min(1).max(128).default(6)),
    /**
     * TLS and SASL of every kafkajs client (common/kafka.ts, createKafka), as managed Kafka services
     * take them: SASL_SSL with SCRAM. The CA file is what the brokers' certificates are checked against
     * (without one, Node's built-in public CAs); the host name is always checked. A mechanism needs
     * its username and password. `plain` sends the password itself: production refuses it without
     * KAFKA_SSL (SCRAM never sends it).
     */
    ssl: setting('KAFKA_SSL', Joi.boolean().default(false)),
    sslCaFile: optional('KAFKA_SSL_CA_FILE', caFile()
      .when('KAFKA_SSL', { is: true, otherwise: Joi.forbidden() })
      .messages({ 'any.unknown': '{{#label}} is only read with KAFKA_SSL=true' })),
    sasl: {
      mechanism: optional('KAFKA_SASL_MECHANISM', Joi.string<KafkaSaslMechanism>().valid(...SASL_MECHANISMS).empty('')),
      username: optional('KAFKA_SASL_USERNAME', saslCredential()),
      password: optional('KAFKA_SASL_PASSWORD', saslCredential()),
    },
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
   * long an Idempotency-Key is kept (docs/reference/events.md#rule-11: 24 hours).
   */
  eventBus: {
    publishTimeoutMs: setting('EVENTS_PUBLISH_TIMEOUT_MS', Joi.number().integer().min(100).max(30_000).default(1000)),
    schemaCacheTtlMs: setting('EVENTS_SCHEMA_CACHE_TTL_MS', Joi.number().integer().min(0).max(3_600_000).default(30_000)),
    idempotencyTtlHours: setting('EVENTS_IDEMPOTENCY_TTL_HOURS', Joi.number().integer().min(1).default(24)),
  },
  /**
   * Consumer groups (docs/reference/events.md, rules 15 to 19): how often a handler is tried before its
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
  /**
   * Outbound webhooks (services/events/webhooks/url-policy.ts): whether an endpoint may name a
   * loopback address (127.0.0.0/8, ::1, localhost), for a receiver on the same machine, as the
   * test stack runs one. Private and link-local targets are refused whatever this says, and
   * production refuses the setting itself (common/config/production.ts).
   */
  webhooks: {
    allowLoopback: setting('WEBHOOKS_ALLOW_LOOPBACK', Joi.boolean().default(false)),
  },
  /** Where the events domain's workflows run (replay-all of dead letters); tests point a gateway at their own worker's. */
  eventsWorkflows: {
    taskQueue: setting('EVENTS_TASK_QUEUE', Joi.string().default(taskQueues.events)),
  },
  /**
   * Consumer lag on the gateway's /metrics (docs/reference/events.md#rule-21): how often the gateway samples
   * its groups' offsets from the Kafka admin, and how long lag alerts stay quiet after a ReplayFrom
   * that pushed a group's lag over 100 000 messages (a bulk import).
   */
  consumerLag: {
    sampleIntervalMs: setting('EVENTS_LAG_SAMPLE_MS', Joi.number().integer().min(1000).max(600_000).default(15_000)),
    bulkImportSuppressMinutes: setting('BROKER_BULK_IMPORT_SUPPRESS_MINUTES', Joi.number().integer().min(0).max(1440).default(30)),
  },
};
