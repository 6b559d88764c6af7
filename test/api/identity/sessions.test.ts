import { decodeJwt } from 'jose';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { call, waitFor, type JsonResponse } from '../../helpers/http';
import { bearer, get, jsonBody, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { auditRecordsOf, createMember, login, outboxOfType, send, type Session } from '../../helpers/users';
import type { SessionView } from '../../../services/identity/user-sessions';

/**
 * GET /v1/auth/sessions, DELETE /v1/auth/sessions/:id and DELETE /v1/auth/sessions: the caller's
 * own sessions in the caller's tenant, where each was used from, and ending them (the refusal of
 * the ended session's access token on every trigger is test/api/identity/revocation.test.ts's).
 */
jest.setTimeout(60_000);

let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  [gateway, owner] = await Promise.all([startTestGateway(), createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'sessions-test-owner' })]);
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});


const sidOf = (accessToken: string) => String(decodeJwt(accessToken).sid);

/** A public identity route called with a User-Agent of the test's choosing. */
function postAs<T>(userAgent: string, path: string, body: unknown): Promise<JsonResponse<T>> {
  return call<T>(`${gateway.baseUrl}/v1${path}`, jsonBody(body, { 'user-agent': userAgent }));
}

async function signIn(account: RegisteredAccount, userAgent: string): Promise<Session> {
  const response = await postAs<Session>(userAgent, '/auth/login', { email: account.user.email, password: account.password });
  expect(response.status).toBe(200);
  return response.body;
}

const list = (token: string) => get<{ data: SessionView[] }>(gateway, '/auth/sessions', token);

/** The access token stops working once the gateway heard the session end; polled far beyond the 1 s promised. */
const untilRefused = (token: string) => waitFor('the ended session\'s access token to be refused', async () => (await get(gateway, '/auth/me', token)).status === 401, 10_000, 20);

describe('GET /v1/auth/sessions', () => {
  it('lists the caller\'s live sessions, most recently used first, with ip, user agent and the current one marked', async () => {
    const account = await registerAccount(gateway);
    const laptop = await signIn(account, 'sessions-test laptop');
    const phone = await signIn(account, 'sessions-test phone');

    const answer = await list(phone.accessToken);
    expect(answer.status).toBe(200);
    expect(answer.body.data.map((session) => session.id)).toEqual([sidOf(phone.accessToken), sidOf(laptop.accessToken), sidOf(account.accessToken)]);
    const [current, other] = answer.body.data;
    expect(current).toEqual({
      id: sidOf(phone.accessToken), createdAt: expect.any(String), lastUsedAt: current.createdAt,
      ip: expect.stringMatching(/127\.0\.0\.1$|^::1$/), userAgent: 'sessions-test phone', current: true,
    });
    expect(other).toMatchObject({ userAgent: 'sessions-test laptop', current: false });
    expect(answer.body.data.filter((session) => session.current)).toHaveLength(1);
  });

  it('records the refresh: lastUsedAt moves, and the client is the refreshing request\'s', async () => {
    const account = await registerAccount(gateway);
    const laptop = await signIn(account, 'sessions-test laptop');
    const rotated = await postAs<Session>('sessions-test laptop, updated', '/auth/refresh', { refreshToken: laptop.refreshToken });
    expect(rotated.status).toBe(200);

    const sessions = (await list(account.accessToken)).body.data;
    const refreshed = sessions.find((session) => session.id === sidOf(laptop.accessToken))!;
    expect(refreshed.userAgent).toBe('sessions-test laptop, updated');
    expect(Date.parse(refreshed.lastUsedAt)).toBeGreaterThan(Date.parse(refreshed.createdAt));
    // A rotation continues the session: still one entry for it.
    expect(sessions).toHaveLength(2);
  });

  it('needs a bearer token', async () => {
    expect((await get(gateway, '/auth/sessions')).body).toMatchObject({ status: 401, type: gateway.problemType('unauthorized') });
  });
});

describe('DELETE /v1/auth/sessions/:id', () => {
  it('ends that session: its refresh token is refused at once, its access token soon after, the others go on', async () => {
    const account = await registerAccount(gateway);
    const other = await signIn(account, 'sessions-test other');
    const ended = sidOf(account.accessToken);

    expect((await send(gateway, 'DELETE', `/auth/sessions/${ended}`, other.accessToken)).status).toBe(204);
    expect((await call(`${gateway.baseUrl}/v1/auth/refresh`, jsonBody({ refreshToken: account.refreshToken }))).status).toBe(401);
    await untilRefused(account.accessToken);
    expect((await list(other.accessToken)).body.data.map((session) => session.id)).toEqual([sidOf(other.accessToken)]);

    // Ended: no longer one of the caller's sessions.
    expect((await send(gateway, 'DELETE', `/auth/sessions/${ended}`, other.accessToken)).body).toMatchObject({ status: 404, type: gateway.problemType('not-found') });
    const event = (await outboxOfType(owner, account.tenant.id, 'auth.user.logged_out')).at(-1);
    expect(event?.data).toMatchObject({ user_id: account.user.id, tenant_id: account.tenant.id, session_id: ended });
    expect(await auditRecordsOf(owner, account.tenant.id, 'auth.session.ended')).toEqual([
      expect.objectContaining({
        entityType: 'session', entityId: ended, actorId: account.user.id, actorIp: expect.any(String), meta: { currentSessionId: sidOf(other.accessToken) },
      }),
    ]);
  });

  it('may end the current session, as a logout', async () => {
    const account = await registerAccount(gateway);
    expect((await send(gateway, 'DELETE', `/auth/sessions/${sidOf(account.accessToken)}`, account.accessToken)).status).toBe(204);
    await untilRefused(account.accessToken);
  });

  it('answers 404 for another user\'s session, of the same tenant or another, and for an unknown id; 400 for a malformed one', async () => {
    const alice = await registerAccount(gateway);
    const colleague = await login(gateway, await createMember(owner, alice.tenant.id));
    const bob = await registerAccount(gateway);
    const bobSession = sidOf(bob.accessToken);
    for (const foreign of [colleague.accessToken, bob.accessToken]) {
      expect((await send(gateway, 'DELETE', `/auth/sessions/${sidOf(foreign)}`, alice.accessToken)).body).toMatchObject({ status: 404 });
      expect((await get(gateway, '/auth/me', foreign)).status).toBe(200);
    }
    expect((await list(bob.accessToken)).body.data.map((session) => session.id)).toEqual([bobSession]);

    expect((await send(gateway, 'DELETE', '/auth/sessions/0190a0a0-0000-7000-8000-000000000000', alice.accessToken)).status).toBe(404);
    expect((await send(gateway, 'DELETE', '/auth/sessions/not-a-session', alice.accessToken)).body).toMatchObject({ status: 400, type: gateway.problemType('validation-error') });
    expect((await send(gateway, 'DELETE', `/auth/sessions/${bobSession}`)).status).toBe(401);
  });
});

describe('DELETE /v1/auth/sessions', () => {
  it('ends every session of the caller but the current one', async () => {
    const account = await registerAccount(gateway);
    const laptop = await signIn(account, 'sessions-test laptop');
    const phone = await signIn(account, 'sessions-test phone');
    const outsider = await registerAccount(gateway);

    expect((await send(gateway, 'DELETE', '/auth/sessions', phone.accessToken)).status).toBe(204);
    await untilRefused(account.accessToken);
    await untilRefused(laptop.accessToken);
    expect((await call(`${gateway.baseUrl}/v1/auth/refresh`, jsonBody({ refreshToken: laptop.refreshToken }))).status).toBe(401);
    expect((await get(gateway, '/auth/me', phone.accessToken)).status).toBe(200);
    expect((await list(phone.accessToken)).body.data).toEqual([expect.objectContaining({ id: sidOf(phone.accessToken), current: true })]);
    // Another user's sessions are not touched.
    expect((await get(gateway, '/auth/me', outsider.accessToken)).status).toBe(200);

    const event = (await outboxOfType(owner, account.tenant.id, 'auth.user.logged_out')).at(-1);
    expect(event?.data).toMatchObject({ user_id: account.user.id, other_sessions: 2 });
    // Nothing left to end: nothing changes, nothing is written.
    expect((await send(gateway, 'DELETE', '/auth/sessions', phone.accessToken)).status).toBe(204);
    expect(await auditRecordsOf(owner, account.tenant.id, 'auth.sessions.ended')).toHaveLength(1);
    expect((await get(gateway, '/auth/me', phone.accessToken)).status).toBe(200);
  });

  it('keeps the refresh of the current session working', async () => {
    const account = await registerAccount(gateway);
    await signIn(account, 'sessions-test other');
    expect((await call(`${gateway.baseUrl}/v1/auth/sessions`, { method: 'DELETE', headers: bearer(account.accessToken) })).status).toBe(204);
    expect((await call(`${gateway.baseUrl}/v1/auth/refresh`, jsonBody({ refreshToken: account.refreshToken }))).status).toBe(200);
  });
});
