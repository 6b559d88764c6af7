import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { waitFor } from '../../helpers/http';
import { bearer, get, outboxEventsOf, post, registerAccount } from '../../helpers/identity';

/**
 * POST /v1/auth/refresh and /auth/logout: rotation, the grace window for duplicate requests, reuse
 * detection. Two gateways share the database: one with the documented 10-second grace window, one
 * with none, so "reuse after the window" needs no waiting.
 */
let gateway: TestGateway;
let noGrace: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  [gateway, noGrace] = await Promise.all([startTestGateway(), startTestGateway({ env: { REFRESH_GRACE_SECONDS: '0' } })]);
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'refresh-test-owner' });
});

afterAll(async () => {
  await Promise.all([gateway?.close(), noGrace?.close()]);
  await owner?.end();
});

const refresh = (on: TestGateway, refreshToken: unknown) => post(on, '/auth/refresh', { refreshToken });

describe('rotation', () => {
  it('exchanges a refresh token for a new pair in the same tenant, once', async () => {
    const account = await registerAccount(gateway);
    const rotated = await refresh(gateway, account.refreshToken);
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ accessToken: expect.any(String), refreshToken: expect.any(String), expiresAt: expect.any(String) });
    expect(rotated.body.refreshToken).not.toBe(account.refreshToken);
    expect((await get(gateway, '/auth/me', String(rotated.body.accessToken))).body).toMatchObject({ tenantId: account.tenant.id });
    // The successor rotates in turn.
    expect((await refresh(gateway, rotated.body.refreshToken)).status).toBe(200);
  });

  it('stores only hashes of refresh tokens', async () => {
    const account = await registerAccount(gateway);
    const stored = await owner.any(sql.type(z.object({ hash: z.instanceof(Buffer) }))`
      SELECT token_hash AS hash FROM refresh_tokens WHERE user_id = ${account.user.id}
    `);
    expect(stored).toHaveLength(1);
    expect(stored[0].hash).toHaveLength(32);
    expect(stored[0].hash.toString('base64url')).not.toBe(account.refreshToken);
  });

  it('answers 401 for an unknown token and 400 for a malformed body', async () => {
    expect((await refresh(gateway, 'A'.repeat(43))).body).toMatchObject({ status: 401, type: gateway.problemType('unauthorized') });
    expect((await refresh(gateway, 42)).body).toMatchObject({ status: 400, type: gateway.problemType('validation-error') });
  });

  it('answers 401 token-expired for a refresh token past its lifetime', async () => {
    const account = await registerAccount(gateway);
    await owner.query(sql.unsafe`UPDATE refresh_tokens SET expires_at = now() - interval '1 second' WHERE user_id = ${account.user.id}`);
    expect((await refresh(gateway, account.refreshToken)).body).toMatchObject({ status: 401, type: gateway.problemType('token-expired') });
  });
});

describe('absolute session lifetime (ASVS 3.3.2)', () => {
  const MAX = 12 * 3600;
  /** Moves the session's sign-in `seconds` into the past, as if it had been that long ago. */
  const signedInAgo = (userId: string, seconds: number) => owner.query(sql.unsafe`
    UPDATE refresh_tokens SET authenticated_at = now() - make_interval(secs => ${seconds}), created_at = now() - make_interval(secs => ${seconds})
    WHERE user_id = ${userId}
  `);

  it('defaults to 12 hours', () => {
    expect(gateway.config.identity.ttl.refreshSessionMax).toBe(MAX);
  });

  it('still refreshes a session within its lifetime, however often it was refreshed', async () => {
    const account = await registerAccount(gateway);
    const rotated = await refresh(gateway, account.refreshToken);
    await signedInAgo(account.user.id, MAX - 3600);
    expect((await refresh(gateway, rotated.body.refreshToken)).status).toBe(200);
  });

  it('refuses a refresh past it as an expired token, and ends the session', async () => {
    const account = await registerAccount(gateway);
    const rotated = await refresh(gateway, account.refreshToken);
    expect(rotated.status).toBe(200);
    await signedInAgo(account.user.id, MAX + 1);

    expect((await refresh(gateway, rotated.body.refreshToken)).body).toMatchObject({ status: 401, type: gateway.problemType('token-expired') });
    const live = await owner.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM refresh_tokens WHERE user_id = ${account.user.id} AND revoked_at IS NULL
    `);
    expect(live).toBe(0);
    // The session's access token ended with it (the revocation is announced to every gateway).
    await waitFor('the ended session\'s access token to be refused', async () =>
      (await get(gateway, '/auth/me', String(rotated.body.accessToken))).status === 401);
    // Signing in again opens a new session.
    const again = await post(gateway, '/auth/login', { email: account.user.email, password: account.password });
    expect((await refresh(gateway, again.body.refreshToken)).status).toBe(200);
  });
});

describe('grace window', () => {
  it('gives two simultaneous refreshes with one token the identical new pair', async () => {
    const account = await registerAccount(gateway);
    const [first, second] = await Promise.all([refresh(gateway, account.refreshToken), refresh(gateway, account.refreshToken)]);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    // The shared successor is a working token, and the family is intact.
    expect((await refresh(gateway, first.body.refreshToken)).status).toBe(200);
  });

  it('gives a duplicate sent just after the first the identical pair too', async () => {
    const account = await registerAccount(gateway);
    const first = await refresh(gateway, account.refreshToken);
    const duplicate = await refresh(gateway, account.refreshToken);
    expect(duplicate.body).toEqual(first.body);
  });
});

describe('reuse detection', () => {
  it('revokes the whole family when a rotated token comes back after the grace window', async () => {
    const account = await registerAccount(noGrace);
    const rotated = await refresh(noGrace, account.refreshToken);
    expect(rotated.status).toBe(200);

    const replay = await refresh(noGrace, account.refreshToken);
    expect(replay.body).toMatchObject({ status: 401, type: gateway.problemType('unauthorized') });
    // The legitimate holder's newer token went with the family.
    expect((await refresh(noGrace, rotated.body.refreshToken)).status).toBe(401);
    const live = await owner.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM refresh_tokens WHERE user_id = ${account.user.id} AND revoked_at IS NULL
    `);
    expect(live).toBe(0);
  });

  it('leaves the other sessions of the user alone', async () => {
    const account = await registerAccount(noGrace);
    const otherSession = await post(noGrace, '/auth/login', { email: account.user.email, password: account.password });
    await refresh(noGrace, account.refreshToken);
    await refresh(noGrace, account.refreshToken); // reuse: revokes the registration's family only
    expect((await refresh(noGrace, otherSession.body.refreshToken)).status).toBe(200);
  });
});

describe('logout', () => {
  it('revokes the refresh token (a later refresh is 401) and writes auth.user.logged_out', async () => {
    const account = await registerAccount(gateway);
    const response = await post(gateway, '/auth/logout', { refreshToken: account.refreshToken }, bearer(account.accessToken));
    expect(response.status).toBe(204);
    expect((await refresh(gateway, account.refreshToken)).body).toMatchObject({ status: 401, type: gateway.problemType('unauthorized') });
    const events = await outboxEventsOf(owner, account.tenant.id);
    expect(events.find((event) => event.type === 'auth.user.logged_out')).toMatchObject({
      partitionKey: account.user.id, data: { user_id: account.user.id, tenant_id: account.tenant.id },
    });
    // The session's access token ended with it (test/api/identity/revocation.test.ts); logging out
    // again, from another session of the account, changes nothing.
    const again = await post(gateway, '/auth/login', { email: account.user.email, password: account.password });
    expect((await post(gateway, '/auth/logout', { refreshToken: account.refreshToken }, bearer(String(again.body.accessToken)))).status).toBe(204);
  });

  it('needs the bearer token, and refuses another user’s refresh token', async () => {
    const account = await registerAccount(gateway);
    const other = await registerAccount(gateway);
    expect((await post(gateway, '/auth/logout', { refreshToken: account.refreshToken })).status).toBe(401);
    const foreign = await post(gateway, '/auth/logout', { refreshToken: other.refreshToken }, bearer(account.accessToken));
    expect(foreign.status).toBe(401);
    expect((await refresh(gateway, other.refreshToken)).status).toBe(200);
  });
});
