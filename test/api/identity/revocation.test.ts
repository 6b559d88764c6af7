import { decodeJwt } from 'jose';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { withTenant } from '../../../db/tenant';
import { issueOneTimeToken } from '../../../services/identity/one-time-tokens';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { waitFor } from '../../helpers/http';
import { addMembership, bearer, get, post, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { createMember, login, send, type Member } from '../../helpers/users';

/**
 * Instant revocation (docs/decisions/identity.md, Instant revocation and sessions): whatever ends a
 * session makes its access token answer 401 on its next request once PostgreSQL's announcement
 * (migration 0039) reached the gateway, /auth/me included although its answer is cached, while a
 * session opened afterwards works. The gateway follows the announcements before each test, so the
 * refusal is the announcement's doing; the 1 s promise is the mechanism's, and the tests poll with a
 * deadline far beyond it instead of timing it.
 */
jest.setTimeout(60_000);

let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  [gateway, owner] = await Promise.all([startTestGateway(), createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'revocation-test-owner' })]);
});

beforeEach(() => untilFollowing(gateway));

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

const untilFollowing = (on: TestGateway) => waitFor('the gateway to follow ended sessions', async () => on.runtime.revocations.isFollowing, 15_000, 20);

const me = (token: string, on = gateway) => get(on, '/auth/me', token);

/** /auth/me twice, the second answered from the gateway's cache: a refusal afterwards is not a cache miss's doing. */
async function warm(token: string): Promise<void> {
  expect((await me(token)).status).toBe(200);
  const hits = gateway.runtime.meAnswers.stats.hits;
  expect((await me(token)).status).toBe(200);
  expect(gateway.runtime.meAnswers.stats.hits).toBeGreaterThan(hits);
}

/** Polls until the token is refused on /auth/me, then checks it is refused on another bearer route too. */
async function untilRefused(token: string, on = gateway): Promise<void> {
  await waitFor('the access token to be refused', async () => (await me(token, on)).status === 401, 10_000, 20);
  expect((await me(token, on)).body).toMatchObject({ status: 401, type: on.problemType('unauthorized') });
  expect((await get(on, '/auth/tenants', token)).status).toBe(401);
}

/** A member of a new tenant (its owner registered), signed in with a warm /auth/me. */
async function signedInMember(): Promise<{ tenant: RegisteredAccount; member: Member; token: string }> {
  const tenant = await registerAccount(gateway);
  const member = await createMember(owner, tenant.tenant.id);
  const { accessToken } = await login(gateway, member);
  await warm(accessToken);
  return { tenant, member, token: accessToken };
}

describe('the access token of an ended session answers 401, a later session works', () => {
  it('a user soft-deleted (DELETE /users/:id); restored, the user signs in again', async () => {
    const { tenant, member, token } = await signedInMember();
    expect((await send(gateway, 'DELETE', `/users/${member.id}`, tenant.accessToken)).status).toBe(204);
    await untilRefused(token);

    expect((await send(gateway, 'PATCH', `/users/${member.id}/restore`, tenant.accessToken)).status).toBe(200);
    const fresh = await login(gateway, member);
    expect((await me(fresh.accessToken)).status).toBe(200);
    expect((await me(token)).status).toBe(401);
  });

  it('a user blocked (PATCH /users/:id status locked); unblocked, the user signs in again', async () => {
    const { tenant, member, token } = await signedInMember();
    expect((await send(gateway, 'PATCH', `/users/${member.id}`, tenant.accessToken, { status: 'locked' })).status).toBe(200);
    await untilRefused(token);

    expect((await send(gateway, 'PATCH', `/users/${member.id}`, tenant.accessToken, { status: 'active' })).status).toBe(200);
    const fresh = await login(gateway, member);
    expect((await me(fresh.accessToken)).status).toBe(200);
    expect((await me(token)).status).toBe(401);
  });

  it('a membership removed: only the sessions of that tenant end, the account\'s other tenant keeps working', async () => {
    const other = await registerAccount(gateway);
    const { tenant, member, token } = await signedInMember();
    await addMembership(owner, other.tenant.id, member.id);
    const switched = await post(gateway, '/auth/switch-tenant', { tenantId: other.tenant.id }, bearer(token));
    expect(switched.status).toBe(200);
    const otherToken = String(switched.body.accessToken);

    expect((await send(gateway, 'DELETE', `/users/${member.id}`, tenant.accessToken)).status).toBe(204);
    await untilRefused(token);
    expect((await me(otherToken)).status).toBe(200);
  });

  it('a membership removed by any writer (an operator\'s SQL): the trigger of migration 0039 ends its sessions', async () => {
    const { tenant, member, token } = await signedInMember();
    await owner.transaction(async (tx) => {
      await tx.query(sql.unsafe`DELETE FROM user_roles WHERE tenant_id = ${tenant.tenant.id} AND user_id = ${member.id}`);
      await tx.query(sql.unsafe`DELETE FROM memberships WHERE tenant_id = ${tenant.tenant.id} AND user_id = ${member.id}`);
    });
    await untilRefused(token);
  });

  it('a logout (POST /auth/logout): that session only', async () => {
    const account = await registerAccount(gateway);
    await warm(account.accessToken);
    const second = await login(gateway, { email: account.user.email, password: account.password });
    expect((await post(gateway, '/auth/logout', { refreshToken: account.refreshToken }, bearer(account.accessToken))).status).toBe(204);
    await untilRefused(account.accessToken);
    expect((await me(second.accessToken)).status).toBe(200);
    const fresh = await login(gateway, { email: account.user.email, password: account.password });
    expect((await me(fresh.accessToken)).status).toBe(200);
  });

  it('a password change (POST /auth/reset-password): every session of the account; the new password signs in', async () => {
    const account = await registerAccount(gateway);
    await warm(account.accessToken);
    const { tenant, user } = account;
    const link = await withTenant(gateway.runtime.identity.db, tenant.id, (tx) => issueOneTimeToken(tx, gateway.config.identity.oneTimeTokenTtl, {
      purpose: 'reset_password', userId: user.id, tenantId: tenant.id, email: user.email,
    }));
    const password = 'another-correct-zebra-staple-42';
    expect((await post(gateway, '/auth/reset-password', { token: link.value, password })).status).toBe(200);
    await untilRefused(account.accessToken);

    const fresh = await login(gateway, { email: user.email, password });
    expect((await me(fresh.accessToken)).status).toBe(200);
  });

  it('a session ended (DELETE /auth/sessions/:id) from another session of the user', async () => {
    const account = await registerAccount(gateway);
    await warm(account.accessToken);
    const second = await login(gateway, { email: account.user.email, password: account.password });
    const sid = String(decodeJwt(account.accessToken).sid);
    expect((await send(gateway, 'DELETE', `/auth/sessions/${sid}`, second.accessToken)).status).toBe(204);
    await untilRefused(account.accessToken);
    expect((await me(second.accessToken)).status).toBe(200);
  });

  it('a refreshed access token of an ended session is refused too: the session, not the token, ended', async () => {
    const account = await registerAccount(gateway);
    const rotated = await post(gateway, '/auth/refresh', { refreshToken: account.refreshToken });
    const rotatedToken = String(rotated.body.accessToken);
    expect(decodeJwt(rotatedToken).sid).toBe(decodeJwt(account.accessToken).sid);
    expect((await post(gateway, '/auth/logout', { refreshToken: rotated.body.refreshToken }, bearer(rotatedToken))).status).toBe(204);
    await untilRefused(account.accessToken);
    await untilRefused(rotatedToken);
  });
});

describe('when the gateway does not hear the announcements', () => {
  it('checks every request\'s session in the database, so an ended one is refused at once', async () => {
    const { revocations } = gateway.runtime;
    const account = await registerAccount(gateway);
    const sid = String(decodeJwt(account.accessToken).sid);
    // As PgChannelListener tells it when the LISTEN connection is lost.
    revocations.lost();
    try {
      const checks = revocations.stats.databaseChecks;
      expect((await me(account.accessToken)).status).toBe(200);
      expect(revocations.stats.databaseChecks).toBeGreaterThan(checks);
      await owner.query(sql.unsafe`UPDATE refresh_tokens SET revoked_at = now() WHERE family_id = ${sid}`);
      // No polling: the very next request reads the database.
      expect((await me(account.accessToken)).status).toBe(401);
    } finally {
      revocations.listening();
    }
  });

  it('a gateway started after a session ended refuses its token, before and after it has caught up', async () => {
    const account = await registerAccount(gateway);
    const second = await login(gateway, { email: account.user.email, password: account.password });
    expect((await send(gateway, 'DELETE', `/auth/sessions/${String(decodeJwt(account.accessToken).sid)}`, second.accessToken)).status).toBe(204);

    const late = await startTestGateway();
    try {
      expect((await me(account.accessToken, late)).status).toBe(401);
      await untilFollowing(late);
      // Now from the sessions read back at start-up, without a database check.
      const checks = late.runtime.revocations.stats.databaseChecks;
      expect((await me(account.accessToken, late)).status).toBe(401);
      expect((await me(second.accessToken, late)).status).toBe(200);
      expect(late.runtime.revocations.stats.databaseChecks).toBe(checks);
    } finally {
      await late.close();
    }
  });
});
