import type { Config } from '../../common/config';
import { createKafka } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import { ConsumerLag } from '../../services/events/consumer-lag';
import { kafkaGroupId } from '../../services/events/consumers/group-names';
import { loadModuleSubscribers } from '../../services/data/module-subscribers';
import { TopicTails } from '../../services/events/consumers/topic-tail';
import type { GatewayRuntime } from '../gateway-runtime';
import { registerConsumerLagMetrics } from '../metrics/consumer-lag-metrics';
import { registerTopicTailMetrics } from '../metrics/topic-tail-metrics';
import { OpenStreams } from './open-streams';
import type { SubscriptionServiceDeps } from './subscription-handlers';
import { startSubscriptionDelivery } from './subscription-delivery';

export interface SubscriptionService {
  deps: SubscriptionServiceDeps;
  /** Ends every open stream (their consumers leave their groups) and stops the lag sampler. */
  close(): Promise<void>;
}

/**
 * What the consumer-group RPCs need in the gateway process: a Kafka client of their own (the
 * gateway's admin answers health checks and has no retries; these calls may wait a little), the
 * registry of open streams, the topic tails its streams follow, and the lag sampler whose gauges
 * join the gateway's /metrics.
 */
export function createSubscriptionService(runtime: GatewayRuntime, config: Readonly<Config>, logger: Logger): SubscriptionService {
  const kafka = createKafka({ ...config.kafka, clientId: `${config.kafka.clientId}-subscribe` }, logger);
  const admin = kafka.admin();
  const streams = new OpenStreams();
  const tails = new TopicTails(kafka, logger);
  // The worker runs these for every tenant (workers/consumers/platform-groups.ts); their offsets are read from here.
  const platformGroups = loadModuleSubscribers(runtime.events.catalogue)
    .map(({ group, topic }) => ({ groupId: kafkaGroupId(group), group, tenantId: null, topic }));
  const lag = new ConsumerLag({ admin, platformGroups: () => platformGroups, openGroups: () => streams.groups() }, config.consumerLag, logger);
  registerConsumerLagMetrics(runtime.gateway.metrics.registry, () => lag.snapshot());
  registerTopicTailMetrics(runtime.gateway.metrics.registry, () => tails.followersByTopic());
  lag.start();
  return {
    deps: {
      rules: runtime.events,
      groups: { admin, kafka },
      streams,
      start: startSubscriptionDelivery(kafka, tails, runtime.connections.db, runtime.connections.tenantReads, config.consumers, logger),
      lag,
      permissions: runtime.access.resolver,
      retention: { standardHours: config.kafka.retentionHours, auditHours: config.kafka.auditRetentionHours },
      bulkImportSuppressMinutes: config.consumerLag.bulkImportSuppressMinutes,
      dedupHours: config.consumers.dedupHours,
      ackTimeoutMs: config.consumers.ackTimeoutMs,
    },
    async close() {
      await streams.endAll();
      await tails.stop();
      await lag.stop();
      await admin.disconnect().catch(() => undefined);
    },
  };
}
