import { sql, createDbPool, type DatabasePool } from '../../../db/pool';
import { deleteUserRole, insertUserRole } from '../../../db/queries/access/roles.queries';
import { withTenant } from '../../../db/tenant';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { waitFor } from '../../helpers/http';
import { get, registerAccount } from '../../helpers/identity';
import { addMember, send, type Member } from '../../helpers/rbac';
import { announced } from '../../helpers/rbac-versions';

/**
 * The permission cache's RBAC versions without a database read per request (migration 0020,
 * api/runtime/tenant-versions.ts): while the gateway LISTENs, a change made anywhere (here: another
 * pool, as a worker or an operator would) applies once PostgreSQL announces it, a change made
 * through the gateway on its very next request; while the LISTEN connection is down every request
 * reads the version again, so a change in the gap is not missed, and after a reconnection the
 * gateway listens and keeps versions again.
 */

let gateway: TestGateway;
let owner: DatabasePool;
let app: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'rbac-versions-test-owner' });
  app = await createDbPool(appUrl(), { maxPoolSize: 2, name: 'rbac-versions-test-app' });
  await waitFor('the gateway to listen for RBAC versions', async () => gateway.runtime.announcements.isListening);
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
  await app?.end();
});

const versions = () => gateway.runtime.access.versions;
const canList = async (member: Member) => (await get(gateway, '/rbac/roles', member.token)).status === 200;

/** A tenant, a member with only the member role, and a custom role that grants roles.list. */
async function tenantWithLister() {
  const tenant = await registerAccount(gateway);
  const member = await addMember(gateway, owner, tenant.tenant.id);
  const role = (await send<{ id: string }>(gateway, 'POST', '/rbac/roles', tenant.accessToken, { name: 'lister', permissions: ['roles.list'] })).body;
  const outside = (change: typeof insertUserRole) => withTenant(app, tenant.tenant.id, (tx) => change(tx, tenant.tenant.id, member.userId, role.id));
  return { tenant, member, role, grantOutside: () => outside(insertUserRole), revokeOutside: () => outside(deleteUserRole) };
}

describe('RBAC versions announced by PostgreSQL', () => {
  it('checks permissions without a version read per request, and applies changes made outside the gateway once announced', async () => {
    const { tenant, member, grantOutside, revokeOutside } = await tenantWithLister();
    expect(await canList(member)).toBe(false);
    const queries = versions().stats.queries;
    for (let i = 0; i < 5; i += 1) expect(await canList(member)).toBe(false);
    expect(versions().stats.queries).toBe(queries);

    await grantOutside();
    await announced(gateway, app, tenant.tenant.id);
    expect(await canList(member)).toBe(true);
    await revokeOutside();
    await announced(gateway, app, tenant.tenant.id);
    expect(await canList(member)).toBe(false);
  });

  it('applies a grant and a revocation made through the gateway on its next request (applied as it commits)', async () => {
    const { tenant, member, role } = await tenantWithLister();
    expect(await canList(member)).toBe(false);
    await send(gateway, 'POST', `/rbac/roles/${role.id}/assign`, tenant.accessToken, { user_id: member.userId });
    expect(await canList(member)).toBe(true);
    await send(gateway, 'POST', `/rbac/roles/${role.id}/revoke`, tenant.accessToken, { user_id: member.userId });
    expect(await canList(member)).toBe(false);
  });

  it('listens again after its connection is killed, and a change made meanwhile is not missed', async () => {
    const { tenant, member, grantOutside, revokeOutside } = await tenantWithLister();
    expect(await canList(member)).toBe(false);
    const listener = gateway.runtime.announcements;
    const listens = listener.listens;
    await app.query(sql.unsafe`
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE application_name = ${`gateway-announcements-${process.pid}`} AND datname = current_database()
    `);
    // Whether the gateway notices before or after this commit, the grant shows on the next request.
    await grantOutside();
    await announced(gateway, app, tenant.tenant.id);
    expect(await canList(member)).toBe(true);

    await waitFor('the listener to listen again', async () => listener.listens > listens && listener.isListening);
    expect(await canList(member)).toBe(true);
    await revokeOutside();
    await announced(gateway, app, tenant.tenant.id);
    expect(await canList(member)).toBe(false);
  });

  it('reads the version on every request while not listening, so a change outside applies on the next request', async () => {
    const { member, grantOutside, revokeOutside } = await tenantWithLister();
    await gateway.runtime.announcements.stop();
    expect(gateway.runtime.announcements.isListening).toBe(false);
    expect(await canList(member)).toBe(false);
    const queries = versions().stats.queries;
    expect(await canList(member)).toBe(false);
    expect(versions().stats.queries).toBe(queries + 1);

    await grantOutside();
    expect(await canList(member)).toBe(true);
    await revokeOutside();
    expect(await canList(member)).toBe(false);
  });
});
