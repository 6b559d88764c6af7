import { z } from 'zod';
import { enqueueEvent } from '../../services/events/publish';
import { newId } from '../../common/ids';
import { createDbPool, sql, type DatabasePool, type DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';

/**
 * Row-level security proof on the shared database: platform_app (the gateway's role) sees and
 * writes only the rows of the tenant its transaction names, and nothing when it names none.
 */

const tenantA = newId();
const tenantB = newId();
const tenants = sql.array([tenantA, tenantB], 'uuid');

let owner: DatabasePool;
// One connection, so "the next transaction" in the leak test runs on the same session.
let app: DatabasePool;

const tenantRow = z.object({ tenantId: z.string() });
const count = z.object({ n: z.number() });

function insertIdempotencyKey(tx: DatabaseTransactionConnection, tenantId: string) {
  return tx.query(sql.unsafe`
    INSERT INTO idempotency_keys (tenant_id, scope, key, request_hash, expires_at)
    VALUES (${tenantId}, 'rls-test', ${newId()}, 'hash', now() + interval '1 hour')
  `);
}

async function seed(tenantId: string, rows: number) {
  await owner.transaction(async (tx) => {
    for (let i = 0; i < rows; i += 1) {
      await enqueueEvent(tx, { tenantId, type: 'crm.contact.created', source: 'rls-test', key: newId(), data: { i } });
      await insertIdempotencyKey(tx, tenantId);
    }
  });
}

beforeAll(async () => {
  await migrateSharedDatabase();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'rls-test-owner' });
  app = await createDbPool(appUrl(), { maxPoolSize: 1, name: 'rls-test-app' });
  await seed(tenantA, 2);
  await seed(tenantB, 3);
});

afterAll(async () => {
  await owner?.query(sql.unsafe`DELETE FROM outbox_events WHERE tenant_id = ANY(${tenants})`);
  await owner?.query(sql.unsafe`DELETE FROM idempotency_keys WHERE tenant_id = ANY(${tenants})`);
  await Promise.all([owner?.end(), app?.end()]);
});

describe.each(['outbox_events', 'idempotency_keys'])('row-level security on %s', (table) => {
  const tenantsOf = (db: Pick<DatabasePool, 'any'>) => db.any(sql.type(tenantRow)`
    SELECT tenant_id AS "tenantId" FROM ${sql.identifier([table])} WHERE tenant_id = ANY(${tenants})
  `);

  it('the rows exist (the owner, not subject to the policy, sees both tenants)', async () => {
    expect((await tenantsOf(owner)).length).toBe(5);
  });

  it('shows platform_app no rows when the transaction names no tenant', async () => {
    expect(await tenantsOf(app)).toEqual([]);
    expect(await app.transaction((tx) => tenantsOf(tx))).toEqual([]);
  });

  it("shows platform_app only tenant A's rows under tenant A's setting", async () => {
    const rows = await withTenant(app, tenantA, (tx) => tenantsOf(tx));
    expect(rows).toEqual([{ tenantId: tenantA }, { tenantId: tenantA }]);
  });

  it("lets tenant A neither change nor delete tenant B's rows", async () => {
    const touched = await withTenant(app, tenantA, async (tx) => {
      const updated = await tx.query(sql.unsafe`UPDATE ${sql.identifier([table])} SET tenant_id = tenant_id WHERE tenant_id = ${tenantB}`);
      const deleted = await tx.query(sql.unsafe`DELETE FROM ${sql.identifier([table])} WHERE tenant_id = ${tenantB}`);
      return updated.rowCount + deleted.rowCount;
    });
    expect(touched).toBe(0);
    expect((await tenantsOf(owner)).filter((row) => row.tenantId === tenantB)).toHaveLength(3);
  });
});

describe('writes under row-level security', () => {
  it("refuses an outbox row for tenant B under tenant A's setting", async () => {
    await expect(withTenant(app, tenantA, (tx) => enqueueEvent(tx, {
      tenantId: tenantB, type: 'crm.contact.created', source: 'rls-test', key: newId(), data: {},
    }))).rejects.toThrow(/row-level security policy/);
  });

  it("refuses an idempotency key for tenant B under tenant A's setting", async () => {
    await expect(withTenant(app, tenantA, (tx) => insertIdempotencyKey(tx, tenantB))).rejects.toThrow(/row-level security policy/);
  });

  it("accepts tenant A's own rows under tenant A's setting", async () => {
    await withTenant(app, tenantA, (tx) => insertIdempotencyKey(tx, tenantA));
    const rows = await owner.oneFirst(sql.type(count)`
      SELECT count(*)::int AS n FROM idempotency_keys WHERE tenant_id = ${tenantA}
    `);
    expect(rows).toBe(3);
  });
});

describe('the application role', () => {
  it('is neither superuser nor exempt from row-level security', async () => {
    const role = await owner.one(sql.type(z.object({ rolsuper: z.boolean(), rolbypassrls: z.boolean() }))`
      SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = 'platform_app'
    `);
    expect(role).toEqual({ rolsuper: false, rolbypassrls: false });
  });

  it('does not own the tenant tables (an owner would not be subject to the policies)', async () => {
    const owners = await owner.anyFirst(sql.type(z.object({ owner: z.string() }))`
      SELECT tableowner AS owner FROM pg_tables WHERE tablename IN ('outbox_events', 'idempotency_keys')
    `);
    expect(owners).toEqual(['platform_owner', 'platform_owner']);
  });

  it('does not carry the tenant setting into the next transaction on the same connection', async () => {
    const session = z.object({ pid: z.number(), tenant: z.string().nullable() });
    const probe = sql.type(session)`SELECT pg_backend_pid() AS pid, current_setting('app.tenant_id', true) AS tenant`;

    const inside = await withTenant(app, tenantA, (tx) => tx.one(probe));
    const after = await app.transaction((tx) => tx.one(probe));
    const visible = await app.transaction((tx) => tx.oneFirst(sql.type(count)`
      SELECT count(*)::int AS n FROM outbox_events WHERE tenant_id = ${tenantA}
    `));

    expect(inside).toEqual({ pid: expect.any(Number), tenant: tenantA });
    expect(after.pid).toBe(inside.pid);
    expect(after.tenant ?? '').toBe('');
    expect(visible).toBe(0);
  });
});
