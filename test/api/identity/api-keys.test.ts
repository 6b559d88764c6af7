import { createHash } from 'node:crypto';
import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { newId } from '../../../common/ids';
import { status } from '@grpc/grpc-js';
import Joi from 'joi';
import { unaryCall } from '../../../common/proto';
import { topics } from '../../../services/events/topics';
import { defineRoute } from '../../../api/http/route-registry';
import { newApiKeySecret } from '../../../services/identity/api-key-format';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { call, waitFor, type JsonResponse } from '../../helpers/http';
import { registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { addMember, send } from '../../helpers/rbac';
import { auditRecordsOf, outboxOfType } from '../../helpers/users';
import { eventServiceClient, failure, metadataOf } from '../../helpers/grpc';
import { installModule } from '../../helpers/modules';

/**
 * API keys (issue 35; docs/decisions/identity.md, API keys) through the real gateway: the routes,
 * authenticating with a key (X-API-Key or a bearer value), acting with exactly the key's permissions,
 * and the refusals (revoked, expired, malformed, unknown).
 */
jest.setTimeout(60_000);

let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  [gateway, owner] = await Promise.all([
    startTestGateway(), createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'api-keys-test-owner' }),
  ]);
  await waitFor('the gateway to LISTEN', async () => gateway.runtime.announcements.isListening, 15_000, 20);
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  permissions: string[];
  createdBy: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  key?: string;
}

type Credential = { token: string } | { key: string; via: 'x-api-key' | 'bearer' };

/** A request under /v1 with an access token, or with an API key in either header. */
function request<T = Record<string, unknown>>(method: string, path: string, who: Credential, body?: unknown): Promise<JsonResponse<T>> {
  if ('token' in who) return send<T>(gateway, method, path, who.token, body);
  const auth = who.via === 'x-api-key' ? { 'x-api-key': who.key } : { authorization: `Bearer ${who.key}` };
  const headers = { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
  return call<T>(`${gateway.baseUrl}/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

const asKey = (key: string, via: 'x-api-key' | 'bearer' = 'x-api-key'): Credential => ({ key, via });

async function createKey(tenant: RegisteredAccount, body: Record<string, unknown>): Promise<ApiKeyView & { key: string }> {
  const created = await request<ApiKeyView & { key: string }>('POST', '/api-keys', { token: tenant.accessToken }, body);
  if (created.status !== 201) throw new Error(`POST /api-keys answered ${created.status}: ${JSON.stringify(created.body)}`);
  return created.body;
}

const storedRow = z.object({ secretHash: z.instanceof(Buffer), revokedAt: z.string().nullable(), revokedBy: z.string().nullable() });

function storedKey(id: string) {
  return owner.one(sql.type(storedRow)`
    SELECT secret_hash AS "secretHash", revoked_at AS "revokedAt", revoked_by AS "revokedBy" FROM api_keys WHERE id = ${id}
  `);
}

function expectProblem(answer: JsonResponse, status: number, suffix: string): void {
  expect({ status: answer.status, type: answer.body.type }).toEqual({ status, type: gateway.problemType(suffix) });
}

/** Polls until the key is refused (the revocation's announcement reached this gateway). */
async function untilRefused(key: string, path = '/users'): Promise<JsonResponse> {
  let answer!: JsonResponse;
  await waitFor('the key to be refused', async () => {
    answer = await request('GET', path, asKey(key));
    return answer.status === 401;
  }, 10_000, 50);
  return answer;
}

describe('POST /api-keys', () => {
  it('answers the secret once and stores only its SHA-256; list and get never show it', async () => {
    const tenant = await registerAccount(gateway);
    const created = await createKey(tenant, { name: 'billing sync', permissions: ['users.list', 'roles.list'] });
    expect(created).toEqual({
      id: expect.any(String), name: 'billing sync', prefix: created.key.slice(0, 13), permissions: ['users.list', 'roles.list'],
      createdBy: tenant.user.id, createdAt: expect.any(String), expiresAt: null, lastUsedAt: null, key: expect.stringMatching(/^plat_[0-9A-Za-z]{38}$/),
    });
    const stored = await storedKey(created.id);
    expect(stored.secretHash.equals(createHash('sha256').update(created.key).digest())).toBe(true);

    const listed = await request<{ data: ApiKeyView[] }>('GET', '/api-keys', { token: tenant.accessToken });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: created.id, prefix: created.prefix })]);
    const shown = await request<ApiKeyView>('GET', `/api-keys/${created.id}`, { token: tenant.accessToken });
    expect(shown.status).toBe(200);
    for (const view of [listed.body.data[0], shown.body]) {
      expect(view).not.toHaveProperty('key');
      expect(JSON.stringify(view)).not.toContain(created.key.slice(13));
    }
  });

  it('pages the list with the page envelope', async () => {
    const tenant = await registerAccount(gateway);
    const ids = [];
    for (let i = 0; i < 3; i += 1) ids.push((await createKey(tenant, { name: `key ${i}`, permissions: ['users.list'] })).id);
    const first = await request<{ data: ApiKeyView[]; next_page_token?: string }>('GET', '/api-keys?page_size=2', { token: tenant.accessToken });
    expect(first.body.data.map((key) => key.id)).toEqual(ids.slice(0, 2));
    const second = await request<{ data: ApiKeyView[]; next_page_token?: string }>(
      'GET', `/api-keys?page_size=2&page_token=${first.body.next_page_token}`, { token: tenant.accessToken });
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[2] })] });
  });

  it('gives a key only permissions its creator holds (403 forbidden), and only assignable ones (400)', async () => {
    const tenant = await registerAccount(gateway);
    await owner.query(sql.unsafe`
      INSERT INTO roles (id, tenant_id, name, permissions) VALUES (${newId()}, ${tenant.tenant.id}, 'key-maker', '{api_keys.manage,users.list}')
    `);
    const maker = await addMember(gateway, owner, tenant.tenant.id, 'key-maker');
    expect((await request('POST', '/api-keys', { token: maker.token }, { name: 'ok', permissions: ['users.list'] })).status).toBe(201);
    expectProblem(await request('POST', '/api-keys', { token: maker.token }, { name: 'more', permissions: ['users.list', 'roles.list'] }), 403, 'forbidden');
    expectProblem(await request('POST', '/api-keys', { token: maker.token }, { name: 'all', permissions: ['*'] }), 403, 'forbidden');
    // The owner holds everything, yet platform-only and unknown keys and * are not assignable.
    for (const permissions of [['*'], ['system.shutdown'], ['nothing.here']]) {
      expectProblem(await request('POST', '/api-keys', { token: tenant.accessToken }, { name: 'bad', permissions }), 400, 'validation-error');
    }
    const past = new Date(Date.now() - 60_000).toISOString();
    expectProblem(await request('POST', '/api-keys', { token: tenant.accessToken }, { name: 'old', permissions: ['users.list'], expiresAt: past }), 400, 'validation-error');
    expectProblem(await request('POST', '/api-keys', { token: tenant.accessToken }, { name: 'none', permissions: [] }), 400, 'validation-error');
  });

  it('writes auth.api_key.created and its audit record through the outbox', async () => {
    const tenant = await registerAccount(gateway);
    const created = await createKey(tenant, { name: 'events', permissions: ['users.list'] });
    expect((await outboxOfType(owner, tenant.tenant.id, 'auth.api_key.created')).map((row) => row.data)).toEqual([
      expect.objectContaining({ keyId: created.id, name: 'events', prefix: created.prefix, permissions: ['users.list'], createdBy: tenant.user.id }),
    ]);
    expect(await auditRecordsOf(owner, tenant.tenant.id, 'auth.api_key.created')).toEqual([
      expect.objectContaining({ entityType: 'api_key', entityId: created.id, actorId: tenant.user.id }),
    ]);
  });
});

describe('authenticating with a key', () => {
  it('works as X-API-Key and as a bearer value, with exactly the key\'s permissions', async () => {
    const tenant = await registerAccount(gateway);
    const { key } = await createKey(tenant, { name: 'lister', permissions: ['users.list'] });
    for (const via of ['x-api-key', 'bearer'] as const) {
      const users = await request<{ data: { id: string }[] }>('GET', '/users', asKey(key, via));
      expect(users.status).toBe(200);
      expect(users.body.data.map((user) => user.id)).toContain(tenant.user.id);
      // The key's creator is the owner, but the key does not hold roles.list.
      expectProblem(await request('GET', '/roles', asKey(key, via)), 403, 'forbidden');
      expectProblem(await request('GET', '/api-keys', asKey(key, via)), 403, 'forbidden');
    }
  });

  it('refuses routes that act for a signed-in person with 403', async () => {
    const tenant = await registerAccount(gateway);
    const { key } = await createKey(tenant, { name: 'person', permissions: ['users.list'] });
    const me = await request('GET', '/auth/me', asKey(key));
    expectProblem(me, 403, 'forbidden');
    expect(me.body.detail).toMatch(/API key/);
    expectProblem(await request('GET', '/auth/tenants', asKey(key)), 403, 'forbidden');
  });

  it('refuses a malformed key, a mistyped one (checksum) and an unknown one with 401, and a JWT still works', async () => {
    const tenant = await registerAccount(gateway);
    const { key } = await createKey(tenant, { name: 'real', permissions: ['users.list'] });
    const mistyped = `${key.slice(0, 10)}${key[10] === 'a' ? 'b' : 'a'}${key.slice(11)}`;
    const misses = gateway.runtime.gateway.apiKeys.stats.misses;
    for (const bad of ['plat_short', mistyped, 'not-a-key']) {
      expectProblem(await request('GET', '/users', asKey(bad)), 401, 'unauthorized');
    }
    // None of these reached the database.
    expect(gateway.runtime.gateway.apiKeys.stats.misses).toBe(misses);
    expectProblem(await request('GET', '/users', asKey(mistyped, 'bearer')), 401, 'unauthorized');
    // A well-formed key that was never issued: one lookup, then 401.
    expectProblem(await request('GET', '/users', asKey(newApiKeySecret().key)), 401, 'unauthorized');
    expect((await request('GET', '/users', { token: tenant.accessToken })).status).toBe(200);
  });

  it('refuses an expired key with 401, even one the gateway has verified before', async () => {
    const tenant = await registerAccount(gateway);
    const created = await createKey(tenant, { name: 'soon', permissions: ['users.list'], expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await request('GET', '/users', asKey(created.key))).status).toBe(200);
    // As an operator would; the change is announced (migration 0038), as a revocation is.
    await owner.query(sql.unsafe`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = ${created.id}`);
    const refused = await untilRefused(created.key);
    expectProblem(refused, 401, 'unauthorized');
    expect(refused.body.detail).toMatch(/expired/);
  });

  it('names the key as the actor of what it does (apikey:<id>) and notes its last use', async () => {
    const tenant = await registerAccount(gateway);
    const manager = await createKey(tenant, { name: 'manager', permissions: ['api_keys.manage', 'users.list'] });
    const actor = `apikey:${manager.id}`;
    const made = await request<ApiKeyView>('POST', '/api-keys', asKey(manager.key), { name: 'made by a key', permissions: ['users.list'] });
    expect(made.status).toBe(201);
    expect(made.body.createdBy).toBe(actor);
    expect(await auditRecordsOf(owner, tenant.tenant.id, 'auth.api_key.created')).toEqual(expect.arrayContaining([
      expect.objectContaining({ entityId: made.body.id, actorId: actor }),
    ]));
    expect((await request('DELETE', `/api-keys/${made.body.id}`, asKey(manager.key))).status).toBe(204);
    expect((await outboxOfType(owner, tenant.tenant.id, 'auth.api_key.revoked')).map((row) => row.data)).toEqual([
      expect.objectContaining({ keyId: made.body.id, revokedBy: actor }),
    ]);
    expect((await storedKey(made.body.id)).revokedBy).toBe(actor);
    // last_used_at is written without the request waiting for it.
    await waitFor('lastUsedAt', async () => (await request<ApiKeyView>('GET', `/api-keys/${manager.id}`, { token: tenant.accessToken })).body.lastUsedAt !== null);
  });
});

describe('the gRPC EventService', () => {
  it('takes a key in the metadata as REST does: publishes with events.publish, refuses what the key does not hold and a revoked key', async () => {
    const tenant = await registerAccount(gateway);
    expect((await installModule(gateway, tenant.accessToken, 'crm')).status).toBe(201);
    const publisher = await createKey(tenant, { name: 'module-server', permissions: ['events.publish'] });
    const reader = await createKey(tenant, { name: 'reader', permissions: ['users.list'] });
    const client = eventServiceClient(gateway);
    const data = { id: newId(), firstName: 'Ada' };
    const publish = (key: string, header: 'x-api-key' | 'authorization') => unaryCall<{ event_id: string }>(client, 'Publish', {
      topic: topics.data.name, key: data.id, event: { type: 'crm.contact.created', data: Buffer.from(JSON.stringify(data)) },
    }, metadataOf(null, { [header]: header === 'x-api-key' ? key : `Bearer ${key}` }));
    try {
      const { event_id: eventId } = await publish(publisher.key, 'x-api-key');
      expect((await publish(publisher.key, 'authorization')).event_id).not.toBe(eventId);
      expect(await failure(publish(reader.key, 'x-api-key'))).toMatchObject({ code: status.PERMISSION_DENIED, problem: 'forbidden' });

      expect((await request('DELETE', `/api-keys/${publisher.id}`, { token: tenant.accessToken })).status).toBe(204);
      await untilRefused(publisher.key);
      expect(await failure(publish(publisher.key, 'x-api-key'))).toMatchObject({ code: status.UNAUTHENTICATED, problem: 'unauthorized' });
    } finally {
      client.close();
    }
  });
});

describe('what a key writes where a user id is expected', () => {
  it('creates a role (created_by stays empty: a key is no account) and reads the usage (no Platform Owner check fails)', async () => {
    const tenant = await registerAccount(gateway);
    const { id, key } = await createKey(tenant, { name: 'rbac bot', permissions: ['roles.create', 'billing.view'] });
    const role = await request<{ id: string }>('POST', '/roles', asKey(key), { name: 'made-by-key', permission_ids: ['users.list'] });
    expect(role.status).toBe(201);
    expect(await owner.oneFirst(sql.type(z.object({ createdBy: z.string().nullable() }))`
      SELECT created_by AS "createdBy" FROM roles WHERE id = ${role.body.id}
    `)).toBeNull();
    expect(await auditRecordsOf(owner, tenant.tenant.id, 'auth.role.created')).toEqual([expect.objectContaining({ actorId: `apikey:${id}` })]);
    expect((await request('GET', '/billing/usage', asKey(key))).status).toBe(200);
  });
});

describe('DELETE /api-keys/{id}', () => {
  it('revokes: 204, the key is refused with 401 once announced, is gone from the API and its event is in the outbox', async () => {
    const tenant = await registerAccount(gateway);
    const created = await createKey(tenant, { name: 'short-lived', permissions: ['users.list'] });
    // Twice: the second is answered from the gateway's cache, which only the announcement can clear.
    expect((await request('GET', '/users', asKey(created.key))).status).toBe(200);
    const hits = gateway.runtime.gateway.apiKeys.stats.hits;
    expect((await request('GET', '/users', asKey(created.key))).status).toBe(200);
    expect(gateway.runtime.gateway.apiKeys.stats.hits).toBeGreaterThan(hits);

    expect((await request('DELETE', `/api-keys/${created.id}`, { token: tenant.accessToken })).status).toBe(204);
    expectProblem(await untilRefused(created.key), 401, 'unauthorized');
    expectProblem(await request('GET', `/api-keys/${created.id}`, { token: tenant.accessToken }), 404, 'not-found');
    expectProblem(await request('DELETE', `/api-keys/${created.id}`, { token: tenant.accessToken }), 404, 'not-found');
    expect((await request<{ data: unknown[] }>('GET', '/api-keys', { token: tenant.accessToken })).body.data).toEqual([]);
    expect((await storedKey(created.id)).revokedBy).toBe(tenant.user.id);
    expect((await outboxOfType(owner, tenant.tenant.id, 'auth.api_key.revoked')).map((row) => row.data)).toEqual([
      expect.objectContaining({ keyId: created.id, revokedBy: tenant.user.id }),
    ]);
  });
});

describe('security', () => {
  it('another tenant\'s key is 404 for get and delete, and stays usable', async () => {
    const [mine, theirs] = await Promise.all([registerAccount(gateway), registerAccount(gateway)]);
    const created = await createKey(theirs, { name: 'theirs', permissions: ['users.list'] });
    expectProblem(await request('GET', `/api-keys/${created.id}`, { token: mine.accessToken }), 404, 'not-found');
    expectProblem(await request('DELETE', `/api-keys/${created.id}`, { token: mine.accessToken }), 404, 'not-found');
    expect((await request<{ data: unknown[] }>('GET', '/api-keys', { token: mine.accessToken })).body.data).toEqual([]);
    expect((await request('GET', '/users', asKey(created.key))).status).toBe(200);
    // A key acts in its own tenant only: the other tenant's users are not listed.
    const users = await request<{ data: { id: string }[] }>('GET', '/users', asKey(created.key));
    expect(users.body.data.map((user) => user.id)).not.toContain(mine.user.id);
  });

  it('needs api_keys.manage: a member is refused every route with 403, an admin is let through', async () => {
    const tenant = await registerAccount(gateway);
    const created = await createKey(tenant, { name: 'x', permissions: ['users.list'] });
    const member = await addMember(gateway, owner, tenant.tenant.id, 'member');
    const attempts: [string, string, unknown?][] = [
      ['POST', '/api-keys', { name: 'y', permissions: ['users.list'] }], ['GET', '/api-keys'],
      ['GET', `/api-keys/${created.id}`], ['DELETE', `/api-keys/${created.id}`],
    ];
    for (const [method, path, body] of attempts) expectProblem(await request(method, path, { token: member.token }, body), 403, 'forbidden');
    const admin = await addMember(gateway, owner, tenant.tenant.id, 'admin');
    expect((await request('GET', '/api-keys', { token: admin.token })).status).toBe(200);
  });

  it('answers 401 without credentials', async () => {
    expectProblem(await call(`${gateway.baseUrl}/v1/api-keys`), 401, 'unauthorized');
  });
});

describe('the rate limit\'s API key group', () => {
  /** A route charged to the apiKey group (api/http/route-registry.ts RATE_LIMIT_GROUPS). */
  const limited = defineRoute({
    namespace: 'gateway', method: 'GET', path: '/test/api-key-limited', operationId: 'testApiKeyLimited',
    summary: 'Counted per API key', auth: 'bearer', permission: 'users.list', rateLimit: 'apiKey',
    schemas: { response: { 200: Joi.object({ ok: Joi.boolean().required() }) } },
    handler(ctx) {
      ctx.body = { ok: true };
    },
  });

  it('counts per key: one key\'s full window does not touch another key of the tenant', async () => {
    const strict = await startTestGateway({ routes: [limited], env: { RATE_LIMIT_PER_MINUTE: '2' } });
    try {
      const tenant = await registerAccount(gateway);
      const [first, second] = [
        await createKey(tenant, { name: 'first', permissions: ['users.list'] }), await createKey(tenant, { name: 'second', permissions: ['users.list'] }),
      ];
      const hit = (key: string) => call(`${strict.baseUrl}/v1/test/api-key-limited`, { headers: { 'x-api-key': key } });
      expect((await hit(first.key)).status).toBe(200);
      expect((await hit(first.key)).status).toBe(200);
      expect((await hit(first.key)).status).toBe(429);
      expect((await hit(second.key)).status).toBe(200);
    } finally {
      await strict.close();
    }
  });
});
