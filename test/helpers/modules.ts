import type { DatabasePool } from '../../db/pool';
import { selectOutboxEventsOfTenant } from '../../db/queries/events/outbox.queries';
import { OutboxPublisher } from '../../workers/outbox/publisher';
import type { TestGateway } from './app';
import { testKafka } from './kafka';
import { send } from './rbac';

/** Helpers for the module registry tests. */

export interface ModuleView {
  slug: string;
  installed: boolean;
  status: 'active' | 'inactive' | null;
  installedVersion: string | null;
  config: Record<string, unknown> | null;
  permissions: { key: string; description: string }[];
}

/** A module, or a problem when the request was refused. */
type ModuleAnswer = ModuleView & Record<string, unknown>;

export const installModule = (gateway: TestGateway, token: string, slug: string) =>
  send<ModuleAnswer>(gateway, 'POST', `/modules/${slug}/install`, token);
export const configureModule = (gateway: TestGateway, token: string, slug: string, body: Record<string, unknown>) =>
  send<ModuleAnswer>(gateway, 'PATCH', `/modules/${slug}`, token, body);
export const uninstallModule = (gateway: TestGateway, token: string, slug: string) =>
  send(gateway, 'DELETE', `/modules/${slug}`, token);

/**
 * Publishes a tenant's outbox rows of the given types to Kafka as the relay does (the platform's
 * own relay serves another database); consumers de-duplicate by event id.
 */
export async function relayTenantEvents(owner: DatabasePool, tenantId: string, typePrefix: string): Promise<number> {
  const rows = (await selectOutboxEventsOfTenant(owner, tenantId)).filter((row) => row.type.startsWith(typePrefix));
  const publisher = new OutboxPublisher(testKafka());
  try {
    await publisher.publish(rows);
  } finally {
    await publisher.reset();
  }
  return rows.length;
}
