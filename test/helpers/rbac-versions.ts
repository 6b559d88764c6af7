import type { DatabasePool } from '../../db/pool';
import { selectRbacVersions } from '../../db/queries/access/roles.queries';
import type { TestGateway } from './app';
import { waitFor } from './http';

/**
 * Waits until the gateway has heard of the tenant's latest RBAC change (migration 0020's
 * announcement), for changes made outside the gateway's process: those reach it through LISTEN,
 * a moment after they commit. While the gateway is not listening, it reads the version on every
 * request, so there is nothing to wait for.
 */
export async function announced(gateway: TestGateway, db: DatabasePool, tenantId: string): Promise<void> {
  const version = (await selectRbacVersions(db, [tenantId])).get(tenantId) ?? 0;
  const { versions, versionChanges } = gateway.runtime.access;
  await waitFor(`the gateway to hear RBAC version ${version} of tenant ${tenantId}`, async () =>
    !versionChanges.isListening || (versions.knownVersion(tenantId) ?? 0) >= version, 10_000, 20);
}
