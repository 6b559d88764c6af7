import type { Config } from '../../common/config';
import type { Kafka } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import type { TenantReader } from '../../db/tenant-reads';
import { DataCatalogue } from '../../services/data/catalogue';
import { loadDataHooks } from '../../services/data/hooks';
import type { RecordWriteDeps } from '../../services/data/records';
import { loadModuleCatalogue } from '../../services/modules/catalogue';
import { GroupConsumer, type ConsumerSettings } from '../../services/events/consumers/group-consumer';
import { loadModuleSubscribers, moduleSubscriberHandler, tenantsWithModule, type ModuleGroup } from '../../services/data/module-subscribers';
import { createWebhookDispatchers, type WebhookDispatchDeps } from '../../services/events/webhooks/dispatcher';
import type { Mailer } from '../../services/notify/mailer';
import { createSecurityMailConsumer, SECURITY_MAIL_GROUP } from '../../services/notify/security-mail';

/**
 * The platform's own consumer groups, run by the worker process for every tenant: the modules'
 * subscribers (services/data/module-subscribers.ts), the webhook dispatchers (services/events/webhooks/dispatcher.ts)
 * and the account holders' security mail (services/notify/security-mail.ts).
 * Each is a GroupConsumer whose Kafka group id is its name.
 */
export interface PlatformGroupDeps {
  kafka: Kafka;
  /** The application role: each delivery runs in its own tenant's transaction. */
  db: DatabasePool;
  /** The same role's reads in one round trip: which tenants of a batch have a group's module. */
  reads: TenantReader;
  logger: Logger;
  settings: ConsumerSettings;
  /** The data layer the subscribers write through. */
  data: RecordWriteDeps;
  /** The groups to run (loadModuleSubscribers). */
  groups: readonly ModuleGroup[];
  partitionsConcurrently: number;
  /** Tests read topics of their own: the topic a group reads instead of its catalogue topic. */
  topicOf?: (topic: string) => string;
  /** Tests pause less between attempts. */
  sleep?: (ms: number) => Promise<void>;
  /** The webhook dispatchers' own needs (the worker's Temporal client, the task queues); none run without. */
  webhooks?: Pick<WebhookDispatchDeps, 'temporal' | 'taskQueues'>;
  /** Sends the security mail (the worker's Temporal client); the group does not run without. */
  securityMail?: Pick<Mailer, 'send'>;
}

export class PlatformGroups {
  readonly consumers: ReadonlyMap<string, GroupConsumer>;

  constructor(deps: PlatformGroupDeps) {
    const consumers = new Map(deps.groups.map((group) => [group.group, new GroupConsumer({
      kafka: deps.kafka, db: deps.db, logger: deps.logger, settings: deps.settings, sleep: deps.sleep,
      groupId: group.group,
      topic: deps.topicOf?.(group.topic) ?? group.topic,
      tenantId: null,
      accepts: (type) => group.events.has(type),
      handler: moduleSubscriberHandler(deps.data, group),
      tenantsServed: tenantsWithModule(deps.reads, group.module),
      // A group's first start reads what the topic retains: events published before it existed count too.
      fromBeginning: true,
      partitionsConcurrently: deps.partitionsConcurrently,
    })]));
    if (deps.webhooks) {
      const { kafka, db, reads, logger, settings } = deps;
      for (const [groupId, consumer] of createWebhookDispatchers({ kafka, db, reads, logger, settings, ...deps.webhooks })) consumers.set(groupId, consumer);
    }
    if (deps.securityMail) {
      const { kafka, db, logger, settings, partitionsConcurrently } = deps;
      consumers.set(SECURITY_MAIL_GROUP, createSecurityMailConsumer({ kafka, db, logger, settings, partitionsConcurrently, mailer: deps.securityMail }));
    }
    this.consumers = consumers;
  }

  /** Starts every group; if one cannot start, the others are stopped again and the error thrown. */
  async start(): Promise<void> {
    const started = await Promise.allSettled([...this.consumers.values()].map((consumer) => consumer.start()));
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) {
      await this.stop();
      throw failed.reason;
    }
  }

  async stop(): Promise<void> {
    await Promise.all([...this.consumers.values()].map((consumer) => consumer.stop()));
  }

  /** Settles with the first group that crashed for good (its client will not restart it). */
  failed(): Promise<{ group: string; error: Error }> {
    return Promise.race([...this.consumers].map(async ([group, consumer]) => {
      const error = await consumer.whenStopped();
      // A stopped group (null) never settles the race.
      return error ? { group, error } : new Promise<never>(() => undefined);
    }));
  }
}

/**
 * Partitions a platform group handles at once, each in offset order. The topics have 6 (BROKER_PARTITIONS);
 * a delivery is mostly one short transaction, so 3 keep the worker's pool (DB_POOL_SIZE) for its activities.
 */
const PARTITIONS_CONCURRENTLY = 3;

/**
 * The worker's platform groups from the configuration: the shipped manifests and their subscribers
 * (a broken one stops the start, as it stops the gateway), and the data layer they write through.
 */
export function createPlatformGroups(
  cfg: Readonly<Config>,
  deps: Pick<PlatformGroupDeps, 'kafka' | 'db' | 'reads' | 'logger'> & Partial<Pick<PlatformGroupDeps, 'topicOf' | 'sleep' | 'settings' | 'webhooks' | 'securityMail'>>,
): PlatformGroups {
  const modules = loadModuleCatalogue(cfg.modules.dir, { maxModels: cfg.data.maxTablesPerModule });
  return new PlatformGroups({
    settings: cfg.consumers,
    ...deps,
    data: {
      db: deps.db, catalogue: new DataCatalogue(modules), limits: cfg.data, hooks: loadDataHooks(modules),
      enforcePlanLimits: cfg.billingLimits.enabled,
    },
    groups: loadModuleSubscribers(modules),
    partitionsConcurrently: PARTITIONS_CONCURRENTLY,
  });
}
