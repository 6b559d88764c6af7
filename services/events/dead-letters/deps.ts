import type { OutgoingRecord } from '../../../common/kafka';
import type { TemporalHandle } from '../../../common/temporal/client';
import type { DatabasePool } from '../../../db/pool';
import type { AuditTrail } from '../audit-trail';

/**
 * Sends redelivery records and resolves once Kafka acknowledged all of them: in the gateway the
 * fail-fast producer (a broker that is down is the caller's 503 at once), in the worker the ordered
 * producer of common/kafka.ts (a failed page is retried by Temporal).
 */
export interface RedeliveryProducer {
  send(records: readonly OutgoingRecord[]): Promise<void>;
}

/** What replay-all's throttle and its workflow's start need (config.consumers, config.events task queue). */
export interface DeadLetterSettings {
  /** The task queue of the events domain, where the replay-all workflow runs. */
  taskQueue: string;
  /** EVENTS_DLQ_REPLAY_PER_SECOND (50). */
  replayPerSecond: number;
  /** Pages of replay-all per workflow run before it continues as new. */
  replayPagesPerRun: number;
}

/** What the dead-letter routes and RPCs work with; built once per gateway (services/events/deps.ts). */
export interface DeadLetterDeps {
  /** The application pool (platform_app): every statement runs under withTenant. */
  db: DatabasePool;
  producer: RedeliveryProducer;
  /** Undefined until the gateway's start-up connection to Temporal succeeded: replay-all is then 503. */
  temporal(): TemporalHandle | undefined;
  settings: DeadLetterSettings;
  /** Where retries and replay requests are audited: audit's writer, passed in (services/events/audit-trail.ts). */
  audit: AuditTrail;
}
