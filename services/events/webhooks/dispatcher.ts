import type { Client } from '@temporalio/client';
import { isUuid } from '../../../common/ids';
import type { Kafka } from '../../../common/kafka';
import type { Logger } from '../../../common/logger';
import type { DatabasePool } from '../../../db/pool';
import {
  enabledWebhookEndpointStatement, selectEnabledWebhookEndpoints, selectWebhookEndpoint,
} from '../../../db/queries/events/webhooks.queries';
import type { TenantReader } from '../../../db/tenant-reads';
import type { WebhookDeliveryInput } from '../../../workflows/events/webhooks.messages';
import { GroupConsumer, type ConsumerSettings, type TransactionalHandler } from '../consumers/group-consumer';
import { topicNames, type TopicName } from '../topics';
import type { WebhookTaskQueues } from './deps';
import { startDelivery } from './deliveries';
import { endpointReceives } from './matching';

/**
 * The webhook dispatcher (issue 35; docs/decisions/events.md, Outbound webhooks): a platform
 * consumer group per catalogue topic (`webhooks.dispatch-<topic's domain>`), run by the worker
 * process beside the modules' subscribers. For each event of a tenant with an enabled endpoint it
 * starts one delivery workflow per endpoint of that tenant whose eventTypes match, in the
 * transaction that claims the group's receipt; the workflow id names tenant, endpoint and event, so
 * an event handed over twice never delivers twice. Events of tenants without an enabled endpoint
 * are skipped without a transaction (tenantsServed). An endpoint receives only what happened
 * after it was created: a group reads what the topic retains on its first start.
 *
 * A retry of a delivery's dead letter (consumer group `webhooks.<endpointId>`) is re-published to
 * the event's topic with `redeliverTo: webhooks.<endpointId>`: the topic's dispatcher adopts it
 * (GroupFilter.adopts) and starts a new run of that endpoint's delivery, which resolves the dead
 * letter once delivered.
 */

const ADOPTED_PREFIX = 'webhooks.';

/** `webhooks.<uuid>`: a delivery's dead letters (webhookConsumerGroup). */
function adoptedEndpoint(redeliverTo: string): string | null {
  const endpointId = redeliverTo.startsWith(ADOPTED_PREFIX) ? redeliverTo.slice(ADOPTED_PREFIX.length) : '';
  return isUuid(endpointId) ? endpointId : null;
}

/** `platform.auth.events` → `webhooks.dispatch-auth`. */
export function webhookDispatchGroupId(topic: TopicName): string {
  return `webhooks.dispatch-${topic.split('.')[1]}`;
}

export interface WebhookDispatchDeps {
  kafka: Kafka;
  /** The application role: each event's endpoints are read in its tenant's transaction. */
  db: DatabasePool;
  /** Which tenants of a batch have an enabled endpoint, in one round trip. */
  reads: TenantReader;
  logger: Logger;
  settings: ConsumerSettings;
  /** Starts the deliveries (the worker's client, with the platform's interceptors). */
  temporal: Client;
  taskQueues: WebhookTaskQueues;
  /** Tests read some topics only, under group ids of their own. */
  topics?: readonly TopicName[];
  groupIdOf?: (topic: TopicName) => string;
}

function dispatchHandler(deps: WebhookDispatchDeps): TransactionalHandler {
  return {
    kind: 'transactional',
    async handle({ event, topic, partition, offset, adoptedFor }, tx) {
      const { envelope, key, correlationId } = event;
      const { tenantId } = envelope;
      const delivery = (endpointId: string): WebhookDeliveryInput => ({
        tenantId, endpointId, envelope, source: { topic, partition, offset, key, correlationId }, notifyTaskQueue: deps.taskQueues.notify,
      });
      if (adoptedFor !== undefined) {
        const endpointId = adoptedEndpoint(adoptedFor)!;
        // A deleted endpoint has nothing to deliver to; its dead letter stays as it is until it expires.
        if (await selectWebhookEndpoint(tx, tenantId, endpointId)) await startDelivery(deps.temporal, deps.taskQueues.events, delivery(endpointId), true);
        return;
      }
      const endpoints = (await selectEnabledWebhookEndpoints(tx, tenantId))
        .filter((endpoint) => endpointReceives(endpoint.eventTypes, envelope.type) && Date.parse(endpoint.createdAt) <= Date.parse(envelope.timestamp));
      for (const endpoint of endpoints) await startDelivery(deps.temporal, deps.taskQueues.events, delivery(endpoint.id), false);
    },
  };
}

/** Of a batch's tenants, those with an enabled endpoint (GroupConsumerOptions.tenantsServed). */
function tenantsWithEndpoints(reads: TenantReader): (tenantIds: readonly string[]) => Promise<ReadonlySet<string>> {
  return async (tenantIds) => {
    const served = await Promise.all(tenantIds.map(async (tenantId) => (await reads.rows(tenantId, enabledWebhookEndpointStatement(tenantId))).length > 0));
    return new Set(tenantIds.filter((_, i) => served[i]));
  };
}

/**
 * Partitions a dispatcher handles at once: a delivery is one short transaction and a workflow start
 * per matching endpoint, and eight topics' dispatchers share the worker's pool with its activities.
 */
const PARTITIONS_CONCURRENTLY = 2;

/** One dispatcher per topic, keyed by Kafka group id; started and stopped with the platform's groups. */
export function createWebhookDispatchers(deps: WebhookDispatchDeps): Map<string, GroupConsumer> {
  const handler = dispatchHandler(deps);
  const tenantsServed = tenantsWithEndpoints(deps.reads);
  return new Map((deps.topics ?? topicNames).map((topic) => {
    const groupId = deps.groupIdOf?.(topic) ?? webhookDispatchGroupId(topic);
    return [groupId, new GroupConsumer({
      kafka: deps.kafka, db: deps.db, logger: deps.logger, settings: deps.settings, groupId, topic, tenantId: null,
      accepts: () => true,
      adopts: (redeliverTo) => adoptedEndpoint(redeliverTo) !== null,
      handler, tenantsServed, fromBeginning: true, partitionsConcurrently: PARTITIONS_CONCURRENTLY,
    })];
  }));
}
