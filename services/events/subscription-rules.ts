import { problems, type FieldError } from '../../common/problems';
import type { DeclaredEvents } from './declared-events';
import { groupModule, isGroupName, kafkaGroupId } from './consumers/group-names';
import { defaultTopicFor, isTopicName, type TopicName } from './topics';

/**
 * Who may read what through a tenant's consumer group (Subscribe, Unsubscribe,
 * ReplayFrom, GetConsumerPosition; docs/reference/events.md#rule-3 and #rule-13). The group is
 * `<service>.<handler>`; its first segment names the consuming module, which must be installed and active for
 * the tenant and receives only the types its manifest lists in `events.subscribes`. The group always belongs
 * to the caller's tenant: its Kafka group id is `tenant.<tenantId>.<group>`, so a tenant can neither read
 * nor move another tenant's group of the same name.
 */

/** A tenant's group on a topic, as the four RPCs name it. */
export interface TenantGroup {
  topic: TopicName;
  /** The group's name, `<service>.<handler>`. */
  group: string;
  tenantId: string;
  /** The Kafka group id it runs under (kafkaGroupId). */
  groupId: string;
}

/** A subscription that may stream: its group, and the event types its module receives from the topic. */
export interface Subscription extends TenantGroup {
  module: string;
  types: readonly string[];
}

export interface SubscriptionRuleDeps {
  catalogue: DeclaredEvents;
  /** Whether a module is installed and active for a tenant (the gateway's installed-modules cache). */
  installed: { isActive(tenantId: string, slug: string): Promise<boolean> };
}

/**
 * The request's topic and group, checked in that order: an empty field is INVALID_ARGUMENT, a topic
 * outside the catalogue NOT_FOUND (docs/reference/events.md, Errors), a group name not of the form `<service>.<handler>`
 * INVALID_ARGUMENT.
 */
export function tenantGroupOf(tenantId: string, topic: string, group: string): TenantGroup {
  if (!topic) throw problems.validation([{ field: 'topic', code: 'REQUIRED', message: 'topic is required' }]);
  if (!isTopicName(topic)) throw problems.notFound(`topic ${topic}`);
  const errors: FieldError[] = [];
  if (!group) errors.push({ field: 'group_id', code: 'REQUIRED', message: 'group_id is required' });
  else if (!isGroupName(group)) {
    errors.push({
      field: 'group_id', code: 'INVALID_FORMAT',
      message: 'group_id is <consuming-service>.<handler-name> in lower case, such as crm.user-created',
    });
  }
  if (errors.length > 0) throw problems.validation(errors, 'The consumer group is not valid');
  return { topic, group, tenantId, groupId: kafkaGroupId(group, tenantId) };
}

/**
 * Subscribe's rules after the caller's permission: the topic and group (tenantGroupOf), then the
 * group's module — known, installed and active for the tenant, and declaring at least one type of
 * this topic in `events.subscribes` — else 403 event-subscribe-not-declared (PERMISSION_DENIED).
 */
export async function checkSubscription(deps: SubscriptionRuleDeps, tenantId: string, topic: string, group: string): Promise<Subscription> {
  const target = tenantGroupOf(tenantId, topic, group);
  const module = groupModule(group);
  const manifest = deps.catalogue.get(module);
  if (!manifest) throw problems.eventSubscribeNotDeclared(module, target.topic, `there is no module ${module}`);
  const types = manifest.events.subscribes.filter((type) => defaultTopicFor(type) === target.topic);
  if (types.length === 0) {
    throw problems.eventSubscribeNotDeclared(module, target.topic, `its manifest declares no type of ${target.topic} in events.subscribes`);
  }
  if (!await deps.installed.isActive(tenantId, module)) {
    throw problems.eventSubscribeNotDeclared(module, target.topic, 'the module is not installed and active for this tenant');
  }
  return { ...target, module, types };
}
