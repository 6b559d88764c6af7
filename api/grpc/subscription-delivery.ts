import type { Config } from '../../common/config';
import type { Kafka } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import { problems } from '../../common/problems';
import type { DatabasePool } from '../../db/pool';
import type { TenantReader } from '../../db/tenant-reads';
import { GroupConsumer } from '../../services/events/consumers/group-consumer';
import type { TopicTails } from '../../services/events/consumers/topic-tail';
import type { StartDelivery } from './subscription-stream';

/**
 * A Subscribe stream's consumer: the delivery pipeline every consumer group runs
 * (services/events/consumers/group-consumer.ts) with a forwarding handler that writes each event to
 * the stream. The pipeline filters the tenant and the types, de-duplicates by event id (a replayed
 * event the group has received already is dropped), tries a failing write BROKER_MAX_ATTEMPTS times
 * and then dead-letters it; a stream that is gone aborts the delivery, which leaves the event
 * uncommitted for the group's next member. The group's start offsets were committed before
 * (group-offsets.ts prepareGroup), so `fromBeginning` only matters to a group deleted meanwhile.
 * Once a partition has caught up, the stream reads it from the gateway's tail of the topic
 * (topic-tail.ts) instead of fetching the whole topic itself.
 */
/** How stale a stream's committed offset may be while it only skips other tenants' events (GetConsumerPosition, lag). */
const SKIPPED_COMMIT_INTERVAL_MS = 1000;

export function startSubscriptionDelivery(
  kafka: Kafka, tails: TopicTails, db: DatabasePool, reads: TenantReader, settings: Readonly<Config['consumers']>, logger: Logger,
): StartDelivery {
  return async (subscription, deliver, failed) => {
    const types = new Set(subscription.types);
    const consumer = new GroupConsumer({
      kafka, db, logger, settings,
      groupId: subscription.groupId,
      topic: subscription.topic,
      tenantId: subscription.tenantId,
      accepts: (type) => types.has(type),
      handler: { kind: 'forwarding', handle: ({ event }) => deliver(event.envelope) },
      fromBeginning: false,
      // A stream keeps one tenant's events of its topic and skips the rest: committing every fetched
      // batch of skipped messages cost one offset commit to the broker per partition batch per stream.
      skippedCommitIntervalMs: SKIPPED_COMMIT_INTERVAL_MS,
      tail: tails.tailOf(subscription.topic),
      forwardedStatements: (statement) => reads.together(statement),
    });
    try {
      await consumer.start();
    } catch (error) {
      throw problems.unavailable('The event broker did not answer; subscribe again with backoff', error);
    }
    void consumer.whenStopped().then((error) => {
      if (error) failed(problems.unavailable('The stream lost the event broker; subscribe again with backoff', error));
    });
    return { stop: () => consumer.stop() };
  };
}
