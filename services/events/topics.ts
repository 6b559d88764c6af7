/** The topic catalogue (docs/reference/events.md, Events): name, domain, the entity whose id is the partition key. */
export const topics = {
  auth: { name: 'platform.auth.events', key: 'user_id' },
  money: { name: 'platform.money.events', key: 'wallet_id' },
  module: { name: 'platform.module.events', key: 'module_id' },
  files: { name: 'platform.files.events', key: 'file_id' },
  notify: { name: 'platform.notify.events', key: 'user_id' },
  audit: { name: 'platform.audit.events', key: 'entity_id' },
  billing: { name: 'platform.billing.events', key: 'tenant_id' },
  data: { name: 'platform.data.events', key: 'record_id' },
} as const;

export type TopicName = (typeof topics)[keyof typeof topics]['name'];

export const topicNames: readonly TopicName[] = Object.values(topics).map((t) => t.name);

/** Retention per topic: the audit topic keeps 30 days, every other topic 7 (configurable). */
export function retentionHours(topic: TopicName, standardHours: number, auditHours: number): number {
  return topic === topics.audit.name ? auditHours : standardHours;
}

export function isTopicName(name: string): name is TopicName {
  return (topicNames as readonly string[]).includes(name);
}

/**
 * Where an event goes when its publisher names no topic: kernel namespaces and the files and notify
 * domains have their own topic (docs/reference/events.md, Events); every module event goes to the data topic
 * (docs/reference/events.md#rule-5; docs/decisions/events.md, REST publishing).
 * `module.registry.` must be matched as a whole: a module may well be called `module`.
 */
const topicByTypePrefix: ReadonlyArray<readonly [string, TopicName]> = [
  ['auth.', topics.auth.name],
  ['money.', topics.money.name],
  ['billing.', topics.billing.name],
  ['audit.', topics.audit.name],
  ['module.registry.', topics.module.name],
  ['files.', topics.files.name],
  ['notify.', topics.notify.name],
];

export function defaultTopicFor(eventType: string): TopicName {
  return topicByTypePrefix.find(([prefix]) => eventType.startsWith(prefix))?.[1] ?? topics.data.name;
}
