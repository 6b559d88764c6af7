import { call, type JsonResponse } from '../../helpers/http';
import { migrateSharedDatabase } from '../../helpers/db';
import { registerAccount } from '../../helpers/identity';
import { send } from '../../helpers/rbac';
import { EnforcementDelays, startReplicas, untilFollowing, type Replicas } from '../../helpers/replicas';

/**
 * An API key revoked through gateway A is refused by gateway B within 1 s (issue 35;
 * docs/decisions/identity.md, API keys): B has the key in its cache of verified keys
 * (api/runtime/verified-api-keys.ts) when A commits the revocation, and only PostgreSQL's
 * announcement on B's LISTEN connection (migration 0038) can tell B. The cache's TTL (30 s) is far
 * beyond the time allowed, so a refusal seen in time was announced, not expired.
 */
jest.setTimeout(60_000);

let replicas: Replicas;
const delays = new EnforcementDelays();

beforeAll(async () => {
  await migrateSharedDatabase();
  replicas = await startReplicas();
  await Promise.all([untilFollowing(replicas.a), untilFollowing(replicas.b)]);
});

afterAll(async () => {
  delays.print('API keys revoked through gateway A, refused by gateway B');
  await replicas?.close();
});

it('a key revoked through gateway A: gateway B, which verified it from its cache, answers 401 within 1 s', async () => {
  const { a, b } = replicas;
  const tenant = await registerAccount(a);
  const created = await send<{ id: string; key: string }>(a, 'POST', '/api-keys', tenant.accessToken, { name: 'replicated', permissions: ['users.list'] });
  expect(created.status).toBe(201);
  const listUsers = () => call(`${b.baseUrl}/v1/users`, { headers: { 'x-api-key': created.body.key } });
  // Twice: the second is answered from B's cache.
  expect((await listUsers()).status).toBe(200);
  const hits = b.runtime.gateway.apiKeys.stats.hits;
  expect((await listUsers()).status).toBe(200);
  expect(b.runtime.gateway.apiKeys.stats.hits).toBeGreaterThan(hits);

  expect((await send(a, 'DELETE', `/api-keys/${created.body.id}`, tenant.accessToken)).status).toBe(204);
  await delays.measure('API key revoked (401 unauthorized)', Date.now(), listUsers,
    (answer: JsonResponse) => answer.status === 401 && answer.body.type === b.problemType('unauthorized'));
});
