/** The topic catalogue of document 3: name, domain, the entity whose id is the partition key. */
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
