import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { selectUserForLogin } from '../../db/queries/identity/users.queries';
import { selectUserTenants } from '../../db/queries/identity/tenants.queries';
import { startTestGateway, type TestGateway } from '../helpers/app';
import { appUrl, migrateSharedDatabase } from '../helpers/db';
import { registerAccount, type RegisteredAccount } from '../helpers/identity';

/**
 * Row-level security of the identity tables (migration 0002) for platform_app, the gateway's role:
 * under tenant B's setting nothing of tenant A is visible or writable, without a setting nothing
 * at all, and the tenant-less lookups answer only their one question.
 */

let gateway: TestGateway;
let app: DatabasePool;
let a: RegisteredAccount;
let b: RegisteredAccount;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  app = await createDbPool(appUrl(), { maxPoolSize: 2, name: 'identity-rls-test' });
  [a, b] = [await registerAccount(gateway), await registerAccount(gateway)];
});

afterAll(async () => {
  await gateway?.close();
  await app?.end();
});

const count = z.object({ n: z.number() });
const TABLES = ['tenants', 'memberships', 'roles', 'user_roles', 'refresh_tokens', 'subscriptions', 'users'] as const;

/** Rows of the table that belong to tenant A (or, for users, are A's account). */
function rowsOfA(table: (typeof TABLES)[number]) {
  if (table === 'tenants') return sql.unsafe`SELECT count(*)::int AS n FROM tenants WHERE id = ${a.tenant.id}`;
  if (table === 'users') return sql.unsafe`SELECT count(*)::int AS n FROM users WHERE id = ${a.user.id}`;
  return sql.unsafe`SELECT count(*)::int AS n FROM ${sql.identifier([table])} WHERE tenant_id = ${a.tenant.id}`;
}

describe.each(TABLES)('row-level security on %s', (table) => {
  it("shows tenant A's rows under tenant A's setting", async () => {
    const { n } = await withTenant(app, a.tenant.id, (tx) => tx.one(sql.type(count)`${rowsOfA(table)}`));
    expect(n).toBeGreaterThan(0);
  });

  it("hides them under tenant B's setting and without any setting", async () => {
    expect((await withTenant(app, b.tenant.id, (tx) => tx.one(sql.type(count)`${rowsOfA(table)}`))).n).toBe(0);
    expect((await app.one(sql.type(count)`${rowsOfA(table)}`)).n).toBe(0);
  });
});

describe('writes across tenants', () => {
  it("lets tenant B neither give itself a role of A nor insert into A's tenant", async () => {
    await expect(withTenant(app, b.tenant.id, (tx) => tx.query(sql.unsafe`
      INSERT INTO memberships (tenant_id, user_id) VALUES (${a.tenant.id}, ${b.user.id})
    `))).rejects.toThrow(/row-level security/);
    const changed = await withTenant(app, b.tenant.id, async (tx) => {
      const roles = await tx.query(sql.unsafe`UPDATE roles SET permissions = '{*}' WHERE tenant_id = ${a.tenant.id}`);
      const users = await tx.query(sql.unsafe`UPDATE users SET first_name = 'pwned' WHERE id = ${a.user.id}`);
      return roles.rowCount + users.rowCount;
    });
    expect(changed).toBe(0);
  });

  it('refuses the application any change to the plan catalogue and any delete of an account', async () => {
    await expect(app.query(sql.unsafe`UPDATE plans SET price = 0`)).rejects.toThrow(/permission denied/);
    await expect(withTenant(app, a.tenant.id, (tx) => tx.query(sql.unsafe`DELETE FROM users WHERE id = ${a.user.id}`)))
      .rejects.toThrow(/permission denied/);
  });
});

describe('tenant-less lookups', () => {
  it('find an account by e-mail and list its tenants, and nothing more', async () => {
    expect(await selectUserForLogin(app, a.user.email.toUpperCase())).toMatchObject({ id: a.user.id, lastTenantId: null });
    expect(await selectUserTenants(app, a.user.id)).toEqual([{ id: a.tenant.id, name: a.tenant.name, logoUrl: null, role: 'owner' }]);
  });
});
