import { decodeJwt } from 'jose';
import { migrateSharedDatabase } from '../../helpers/db';
import { waitFor, type JsonResponse } from '../../helpers/http';
import { bearer, get, post, registerAccount } from '../../helpers/identity';
import { login, send } from '../../helpers/users';
import { EnforcementDelays, startReplicas, untilFollowing, type Replicas } from '../../helpers/replicas';

/**
 * A session ended through gateway A is refused by gateway B within 1 s (docs/decisions/identity.md,
 * Instant revocation and sessions): B verified the token and cached its /auth/me answer before, and
 * only PostgreSQL's announcement on B's LISTEN connection (migration 0039) can tell B.
 */
jest.setTimeout(60_000);

let replicas: Replicas;
const delays = new EnforcementDelays();

beforeAll(async () => {
  await migrateSharedDatabase();
  replicas = await startReplicas();
  await Promise.all([replicas.a, replicas.b].map(async (gateway) => {
    await untilFollowing(gateway);
    await waitFor('the gateway to follow ended sessions', async () => gateway.runtime.revocations.isFollowing, 15_000, 20);
  }));
});

afterAll(async () => {
  delays.print('Sessions ended through gateway A, refused by gateway B');
  await replicas?.close();
});

const isRefused = (answer: JsonResponse) => answer.status === 401 && answer.body.type === replicas.b.problemType('unauthorized');

/** An account with two sessions, the first one's /auth/me answered from B's cache. */
async function twoSessions() {
  const { a, b } = replicas;
  const account = await registerAccount(a);
  const other = await login(a, { email: account.user.email, password: account.password });
  expect((await get(b, '/auth/me', account.accessToken)).status).toBe(200);
  const hits = b.runtime.meAnswers.stats.hits;
  expect((await get(b, '/auth/me', account.accessToken)).status).toBe(200);
  expect(b.runtime.meAnswers.stats.hits).toBeGreaterThan(hits);
  return { account, other };
}

describe('a session ended through gateway A', () => {
  it('DELETE /auth/sessions/:id: gateway B refuses its access token, and still serves the session that ended it', async () => {
    const { a, b } = replicas;
    const { account, other } = await twoSessions();
    expect((await send(a, 'DELETE', `/auth/sessions/${String(decodeJwt(account.accessToken).sid)}`, other.accessToken)).status).toBe(204);
    await delays.measure('session ended (401 on /auth/me)', Date.now(), () => get(b, '/auth/me', account.accessToken), isRefused);
    expect((await post(b, '/auth/refresh', { refreshToken: account.refreshToken })).status).toBe(401);
    expect((await get(b, '/auth/me', other.accessToken)).status).toBe(200);
  });

  it('POST /auth/logout: gateway B refuses the session\'s access token', async () => {
    const { a, b } = replicas;
    const { account } = await twoSessions();
    expect((await post(a, '/auth/logout', { refreshToken: account.refreshToken }, bearer(account.accessToken))).status).toBe(204);
    await delays.measure('logout (401 on /auth/me)', Date.now(), () => get(b, '/auth/me', account.accessToken), isRefused);
  });
});
