import type { ModuleSubscriber, SubscribedEvent, SubscriberContext } from '../../common/event-subscribers';
import type { DatabaseTransactionConnection } from '../../db/pool';
import { moduleActiveStatement, selectTenantModules } from '../../db/queries/modules/tenant-modules.queries';
import type { TenantReader } from '../../db/tenant-reads';
import * as crmSubscribers from '../../modules/crm/subscribers';
import { createRecordIn, type RecordWriteDeps } from './records';
import { ManifestError } from '../modules/catalogue';
import type { DeclaredEvents } from '../events/declared-events';
import type { DecodedEvent } from '../events/envelope';
import { defaultTopicFor, type TopicName } from '../events/topics';
import type { TransactionalHandler } from '../events/consumers/group-consumer';
import { isGroupName } from '../events/consumers/group-names';

/**
 * The modules' event subscribers as platform consumer groups (docs/decisions/events.md, Consumer
 * groups). A module ships them by convention in `modules/<slug>/subscribers.ts`, exporting
 * `subscribers` (common/event-subscribers.ts); each becomes the group `<slug>.<name>`, run by the
 * worker for every tenant, and checked against the manifest at start-up like the hooks are: its
 * types must be in `events.subscribes` (docs/reference/modules.md#rule-12) and live on one topic. It lives in
 * the data layer, beside the hooks, because a subscriber writes records through it (createRecordIn):
 * the event bus it consumes from sits below data in the order of services (docs/architecture.md).
 */

/**
 * The subscriber code of every shipped module, by slug: static imports, like the hooks'
 * (services/data/hooks.ts), so tsc compiles them with the rest and no path is built at run time.
 */
export const SHIPPED_SUBSCRIBER_CODE: ReadonlyMap<string, readonly ModuleSubscriber[]> = new Map([['crm', crmSubscribers.subscribers]]);

/** A module subscriber ready to run: its group name, the topic of its types. */
export interface ModuleGroup {
  module: string;
  /** `<module>.<name>`; a platform group, so also its Kafka group id. */
  group: string;
  topic: TopicName;
  events: ReadonlySet<string>;
  subscriber: ModuleSubscriber;
}

/**
 * The subscribers of every module in the catalogue. Mistakes are refused like a broken manifest, all
 * at once: a name that makes no group name, a name used twice, no types, a type the manifest does not
 * declare in `events.subscribes`, types on more than one topic (a group reads one topic).
 */
export function loadModuleSubscribers(modules: DeclaredEvents, code: ReadonlyMap<string, readonly ModuleSubscriber[]> = SHIPPED_SUBSCRIBER_CODE): ModuleGroup[] {
  const mistakes: string[] = [];
  const groups: ModuleGroup[] = [];
  for (const manifest of modules.list()) {
    const seen = new Set<string>();
    for (const subscriber of code.get(manifest.slug) ?? []) {
      const group = `${manifest.slug}.${subscriber.name}`;
      const where = `module ${manifest.slug}: subscriber ${subscriber.name}`;
      const before = mistakes.length;
      if (!isGroupName(group)) mistakes.push(`${where} makes no consumer group name (${group})`);
      if (seen.has(subscriber.name)) mistakes.push(`${where} is exported twice`);
      seen.add(subscriber.name);
      if (subscriber.events.length === 0) mistakes.push(`${where} receives no event type`);
      const undeclared = subscriber.events.filter((type) => !manifest.events.subscribes.includes(type));
      if (undeclared.length > 0) mistakes.push(`${where} receives ${undeclared.join(', ')}, which events.subscribes does not declare`);
      const topics = [...new Set(subscriber.events.map(defaultTopicFor))];
      if (topics.length > 1) mistakes.push(`${where} receives types of ${topics.join(' and ')}; a group reads one topic`);
      if (mistakes.length === before) groups.push({ module: manifest.slug, group, topic: topics[0], events: new Set(subscriber.events), subscriber });
    }
  }
  if (mistakes.length > 0) throw new ManifestError(`module subscribers cannot be loaded: ${mistakes.join('; ')}`);
  return groups;
}

/**
 * Whether the module is installed and active for the tenant now, and was installed when the event
 * happened: a module reacts to what happens while it is installed, not to the past it was installed
 * into (a tenant's first user is created before any module can be). Compared to the millisecond, the
 * envelope's precision; a tie counts as installed.
 */
async function installedWhen(tx: DatabaseTransactionConnection, tenantId: string, slug: string, timestamp: string): Promise<boolean> {
  const row = (await selectTenantModules(tx, tenantId)).find((module) => module.slug === slug);
  return !!row && row.status === 'active' && row.deletedAt === null && Date.parse(row.installedAt) <= Date.parse(timestamp);
}

function subscribedEventOf({ envelope, correlationId }: DecodedEvent): SubscribedEvent {
  return { ...envelope, correlationId };
}

/**
 * Of a batch's tenants, those with the module installed and active now (GroupConsumerOptions
 * tenantsServed): one read per tenant, all of a batch's written together (TenantReader.rows).
 * A module's subscriber sees one topic's events of every tenant (crm's, every auth.user.created), and
 * a tenant without the module cost a transaction per event to find that out; those events are now
 * skipped without one. Exact: the batch's events happened before this read, and a module installed
 * after it was installed after them, which installedWhen refuses as well.
 */
export function tenantsWithModule(reads: TenantReader, slug: string): (tenantIds: readonly string[]) => Promise<ReadonlySet<string>> {
  return async (tenantIds) => {
    const active = await Promise.all(tenantIds.map(async (tenantId) => (await reads.rows(tenantId, moduleActiveStatement(tenantId, slug))).length > 0));
    return new Set(tenantIds.filter((_, i) => active[i]));
  };
}

/**
 * The group's handler: in the delivery's tenant transaction, the module's installation is checked
 * and the subscriber runs with a context whose writes go through the data layer in that same
 * transaction. An event of a tenant without the module is skipped before it comes here
 * (tenantsWithModule), or, when the module was installed after the event happened, handled by doing
 * nothing (its receipt is still claimed).
 */
export function moduleSubscriberHandler(data: RecordWriteDeps, group: ModuleGroup): TransactionalHandler {
  return {
    kind: 'transactional',
    handle: async ({ event }, tx) => {
      const { tenantId, timestamp } = event.envelope;
      if (!await installedWhen(tx, tenantId, group.module, timestamp)) return;
      const context: SubscriberContext = {
        tenantId,
        createRecord: (model, values) => createRecordIn(data, tx, tenantId, { module: group.module, model }, { ...values }),
      };
      await group.subscriber.handle(subscribedEventOf(event), context);
    },
  };
}
