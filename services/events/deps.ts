import type { Config } from '../../common/config';
import { FailFastProducer } from '../../common/fail-fast-producer';
import { createKafka } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import type { TemporalHandle } from '../../common/temporal/client';
import type { DatabasePool } from '../../db/pool';
import type { AuditTrail } from './audit-trail';
import type { DeadLetterDeps } from './dead-letters/deps';
import type { DeclaredEvents } from './declared-events';
import type { EventPublishingDeps } from './publishing';
import { SchemaRegistry } from './schema-registry';

/** Pages of replay-all per workflow run (workflows/events/dead-letter-replay.workflow.ts): about 400 history events. */
const REPLAY_PAGES_PER_RUN = 100;

/** What the event bus's routes need, and the producer's end. */
export interface EventsDeps extends EventPublishingDeps {
  /** The dead-letter operations (GET /integrations/dlq, retries, DLQReplayAll), re-publishing through the same producer. */
  deadLetters: DeadLetterDeps;
  close(): Promise<void>;
}

/**
 * Publishing goes straight to Kafka through a producer of its own, on a client that never retries
 * and waits at most EVENTS_PUBLISH_TIMEOUT_MS for a connection or an acknowledgement: a broker that
 * is down is the caller's 503 within that time (docs/reference/events.md#rule-10). Its brokers are
 * config.kafka.brokers, so a test points one gateway at a broker that is not there.
 */
export function createEventsServices(
  config: Readonly<Config>,
  deps: {
    db: DatabasePool; catalogue: DeclaredEvents; installed: EventPublishingDeps['installed']; meter: EventPublishingDeps['meter'];
    temporal: () => TemporalHandle | undefined;
    /** Audit's writer (services/audit/writer.ts), which sits above the bus: the dead-letter actions audit through it. */
    audit: AuditTrail;
  },
  logger: Logger,
): EventsDeps {
  const timeoutMs = config.eventBus.publishTimeoutMs;
  const kafka = createKafka(
    { ...config.kafka, clientId: `${config.kafka.clientId}-publish` }, logger,
    { connectionTimeoutMs: timeoutMs, requestTimeoutMs: timeoutMs, retries: 0 },
  );
  const producer = new FailFastProducer(kafka, timeoutMs);
  const { temporal, audit, ...publishing } = deps;
  return {
    ...publishing,
    schemas: new SchemaRegistry(deps.db, config.eventBus.schemaCacheTtlMs),
    producer,
    idempotencyTtlHours: config.eventBus.idempotencyTtlHours,
    // A redelivery is sent like a publish: a broker that is down is the operator's 503 at once.
    deadLetters: {
      db: deps.db, producer: { send: (records) => producer.sendBatch(records) }, temporal, audit,
      settings: {
        taskQueue: config.eventsWorkflows.taskQueue, replayPerSecond: config.consumers.dlqReplayPerSecond, replayPagesPerRun: REPLAY_PAGES_PER_RUN,
      },
    },
    close: () => producer.close(),
  };
}
