import type { DatabasePool } from '../../db/pool';
import { selectRbacVersions } from '../../db/queries/access/roles.queries';
import type { TestGateway } from './app';
import { waitFor } from './http';

/**
 * Waits until the gateway has heard of the tenant's latest RBAC change (migration 0020's
 * announcement), for changes made outside the gateway's process: those reach it through LISTEN,
 * a moment after they commit. While the gateway is not listening, or does not know the tenant's
 * version, it reads the version on the next request, so there is nothing to wait for.
 */
export async function announced(gateway: TestGateway, db: DatabasePool, tenantId: string): Promise<void> {
  const version = (await selectRbacVersions(db, [tenantId])).get(tenantId) ?? 0;
  const { versions } = gateway.runtime.access;
  const { announcements } = gateway.runtime;
  // A tenant it knows nothing of (not listening, or listening anew) is read on its next request.
  await waitFor(`the gateway to hear RBAC version ${version} of tenant ${tenantId}`, async () => {
    const known = versions.knownVersion(tenantId);
    return !announcements.isListening || known === undefined || known >= version;
  }, 10_000, 20);
}
