import { z } from 'zod';
import { outboxEventOf } from '../../services/events/publish';
import { newId } from '../../common/ids';
import { hashRefreshToken, newRefreshToken } from '../../services/identity/refresh-token-crypto';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { insertSession, type NewRefreshToken } from '../../db/queries/identity/refresh-tokens.queries';
import { selectMe } from '../../db/queries/identity/users.queries';
import { authEvent } from '../../services/identity/events';
import { startTestGateway, type TestGateway } from '../helpers/app';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';
import { addMembership, registerAccount, type RegisteredAccount } from '../helpers/identity';

/**
 * The one-statement identity functions of migration 0021 (auth_me, auth_issue_session), run as
 * platform_app: they set the tenant themselves, so what they may see and write, that the setting
 * ends with the statement, and that a session's refresh token and its event commit together are
 * checked here.
 */

let gateway: TestGateway;
let app: DatabasePool;
let owner: DatabasePool;
let a: RegisteredAccount;
let b: RegisteredAccount;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  // One connection: every statement of a test runs on the same session, so a setting left behind would show.
  app = await createDbPool(appUrl(), { maxPoolSize: 1, name: 'identity-statements-test' });
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 1, name: 'identity-statements-owner' });
  [a, b] = [await registerAccount(gateway), await registerAccount(gateway)];
});

afterAll(async () => {
  await gateway?.close();
  await app?.end();
  await owner?.end();
});

const setting = z.object({ tenant: z.string().nullable() });
const tenantSetting = async () => (await app.one(sql.type(setting)`SELECT current_setting('app.tenant_id', true) AS tenant`)).tenant;

function newToken(tenantId: string, userId: string): NewRefreshToken {
  return { id: newId(), familyId: newId(), userId, tenantId, tokenHash: hashRefreshToken(newRefreshToken()), ttlSeconds: 60, ip: '192.0.2.1', userAgent: 'identity-statements test' };
}

const storedTokens = (id: string) => owner.oneFirst(sql.type(z.object({ n: z.number() }))`
  SELECT count(*)::int AS n FROM refresh_tokens WHERE id = ${id}
`);
const storedEvents = (id: string) => owner.oneFirst(sql.type(z.object({ n: z.number() }))`
  SELECT count(*)::int AS n FROM outbox_events WHERE id = ${id}
`);

describe('auth_me (GET /auth/me)', () => {
  it("answers a member's profile with the grants held now, and leaves no tenant setting behind", async () => {
    expect(await selectMe(app, a.tenant.id, a.user.id)).toMatchObject({ id: a.user.id, email: a.user.email, roles: ['owner'], permissions: ['*'] });
    expect(await tenantSetting()).toBeFalsy();
  });

  it("answers nothing for an account that is not a member of the tenant", async () => {
    expect(await selectMe(app, b.tenant.id, a.user.id)).toBeNull();
  });

  it('shows a role given or taken on the next read', async () => {
    const member = await registerAccount(gateway);
    await addMembership(owner, b.tenant.id, member.user.id, 'member');
    expect(await selectMe(app, b.tenant.id, member.user.id)).toMatchObject({ roles: ['member'], permissions: [] });
    await owner.query(sql.unsafe`
      INSERT INTO user_roles (tenant_id, user_id, role_id)
      SELECT ${b.tenant.id}, ${member.user.id}, id FROM roles WHERE tenant_id = ${b.tenant.id} AND name = 'admin'
    `);
    const promoted = await selectMe(app, b.tenant.id, member.user.id);
    expect(promoted?.roles).toEqual(['admin', 'member']);
    expect(promoted?.permissions).toContain('users.list');
    await owner.query(sql.unsafe`DELETE FROM user_roles WHERE tenant_id = ${b.tenant.id} AND user_id = ${member.user.id}`);
    expect(await selectMe(app, b.tenant.id, member.user.id)).toMatchObject({ roles: [], permissions: [] });
  });

  it("is refused inside another tenant's transaction", async () => {
    await expect(withTenant(app, b.tenant.id, (tx) => selectMe(tx, a.tenant.id, a.user.id))).rejects.toThrow(/another tenant/);
  });
});

describe('auth_issue_session (a session\'s refresh token and event)', () => {
  it('stores the refresh token and its event in one statement and answers the roles', async () => {
    const token = newToken(a.tenant.id, a.user.id);
    const event = outboxEventOf(authEvent('auth.user.logged_in', a.tenant.id, a.user.id, { method: 'password' }));
    expect(await insertSession(app, token, event)).toEqual(['owner']);
    expect([await storedTokens(token.id), await storedEvents(event.id)]).toEqual([1, 1]);
    expect(await tenantSetting()).toBeFalsy();
  });

  it('stores neither when the event cannot be written (here: it names another tenant)', async () => {
    const token = newToken(a.tenant.id, a.user.id);
    const event = outboxEventOf(authEvent('auth.user.logged_in', b.tenant.id, a.user.id, { method: 'password' }));
    await expect(insertSession(app, token, event)).rejects.toThrow(/row-level security/);
    expect([await storedTokens(token.id), await storedEvents(event.id)]).toEqual([0, 0]);
  });

  it("is refused inside another tenant's transaction, so it cannot move that transaction's tenant", async () => {
    const token = newToken(a.tenant.id, a.user.id);
    await expect(withTenant(app, b.tenant.id, (tx) => insertSession(tx, token, null))).rejects.toThrow(/another tenant/);
    expect(await storedTokens(token.id)).toBe(0);
  });
});
