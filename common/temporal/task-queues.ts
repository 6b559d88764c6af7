/**
 * One task queue per domain, so a slow or failing domain (a stuck payment provider, a scan backlog)
 * never starves another's workflows, and each can be scaled by running more workers of its queue.
 */
export const taskQueues = {
  identity: 'platform.identity',
  access: 'platform.access',
  billing: 'platform.billing',
  money: 'platform.money',
  audit: 'platform.audit',
  files: 'platform.files',
  events: 'platform.events',
  maintenance: 'platform.maintenance',
  notify: 'platform.notify',
} as const;

export type Domain = keyof typeof taskQueues;
