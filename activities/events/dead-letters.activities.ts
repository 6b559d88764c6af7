import type { OutgoingRecord } from '../../common/kafka';
import { requestActor } from '../../common/temporal/activity-context';
import type { DatabasePool } from '../../db/pool';
import { auditTrail } from '../../services/audit/writer';
import { replayDeadLetterPage } from '../../services/events/dead-letters/replay';
import type { ReplayPage, ReplayPageInput } from '../../workflows/events/dead-letters.messages';

export type { ReplayPage, ReplayPageInput };

/** The worker's producer (common/kafka.ts ReconnectingProducer): ordered, idempotent, started afresh after a failure. */
export interface WorkerProducer {
  send(records: readonly OutgoingRecord[]): Promise<void>;
  reset(): Promise<void>;
}

export interface DeadLetterActivityDeps {
  appPool: DatabasePool;
  producer: WorkerProducer;
}

/** Replay-all's activity (workflows/events/dead-letter-replay.workflow.ts): services/events/dead-letters/replay.ts. */
export function createDeadLetterActivities(deps: DeadLetterActivityDeps) {
  const producer = {
    async send(records: readonly OutgoingRecord[]): Promise<void> {
      try {
        await deps.producer.send(records);
      } catch (error) {
        // Its sequence numbers may no longer match the broker's: the retried page starts on a fresh producer.
        await deps.producer.reset();
        throw error;
      }
    },
  };
  return {
    /** One page of replay-all, throttled by the workflow; a failure (broker, database) is retried by it. */
    async replayDeadLetterPage(input: ReplayPageInput): Promise<ReplayPage> {
      // Audit sits above the bus, so the page is handed audit's writer here (services/events/audit-trail.ts).
      return replayDeadLetterPage({ appPool: deps.appPool, producer, audit: auditTrail }, input, requestActor());
    },
  };
}

export type DeadLetterActivities = ReturnType<typeof createDeadLetterActivities>;
