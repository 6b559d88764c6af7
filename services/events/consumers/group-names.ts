/**
 * Consumer group names (docs/reference/events.md#rule-13: `<consuming-service>.<handler-name>`) and the Kafka
 * group id a group runs under.
 *
 * - `isGroupName(name)`: the name matches `^[a-z][a-z0-9-]*\.[a-z][a-z0-9_-]*$`.
 * - `groupModule(name)`: the first segment, the consuming module (or platform service).
 * - `kafkaGroupId(group, tenantId?)`: a platform group (no tenant) runs as its name; a tenant's
 *   subscription runs as `tenant.<tenantId>.<group>`, so two tenants' groups of one name never share
 *   offsets, and the id stored in `event_receipts.consumer_group`, `event_dead_letters.consumer_group`
 *   and the `redeliverTo` header is always this Kafka group id.
 * - `parseKafkaGroupId(id)`: the inverse, for answers that start from a stored id.
 */
export const groupNamePattern = /^[a-z][a-z0-9-]*\.[a-z][a-z0-9_-]*$/;

/** Prefix of every tenant subscription's Kafka group id; a group name cannot start with it plus a uuid. */
const tenantPrefix = 'tenant.';

export function isGroupName(name: string): boolean {
  return name.length <= 200 && groupNamePattern.test(name);
}

/** The consuming module of a valid group name: `crm.user-created` → `crm`. */
export function groupModule(group: string): string {
  return group.slice(0, group.indexOf('.'));
}

export function kafkaGroupId(group: string, tenantId?: string | null): string {
  return tenantId ? `${tenantPrefix}${tenantId}.${group}` : group;
}

const tenantGroupIdPattern =
  /^tenant\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(.+)$/;

/** `tenant.<uuid>.<group>` → {tenantId, group}; any other id is a platform group of that name. */
export function parseKafkaGroupId(id: string): { group: string; tenantId: string | null } {
  const match = tenantGroupIdPattern.exec(id);
  return match ? { tenantId: match[1], group: match[2] } : { group: id, tenantId: null };
}
