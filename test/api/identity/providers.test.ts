import { decodeJwt, SignJWT } from 'jose';
import { z } from 'zod';
import { newId } from '../../../common/ids';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { call, type JsonResponse } from '../../helpers/http';
import {
  addMembership, bearer, get, outboxEventsOf, post, registerAccount, uniqueEmail, type RegisteredAccount,
} from '../../helpers/identity';
import { startOidcIssuer, TEST_CLIENT, type IssuerAccount, type TestIssuer } from '../../helpers/oidc-issuer';

/**
 * Sign-in by provider and provider links (docs/reference/identity.md, rules 8 to 10 and 35), end to end against a real
 * OpenID provider started here: the gateway discovers it, sends the browser there, and exchanges
 * the code it gets back; the test plays the browser.
 */
const PROVIDER = 'test-oidc';

let issuer: TestIssuer;
let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  issuer = await startOidcIssuer();
  // 'offline' points at a port where nothing listens (9, discard).
  const offline = { ...issuer.settings('offline', 'Offline'), issuer: 'http://127.0.0.1:9' };
  gateway = await startTestGateway({ env: { AUTH_PROVIDERS: JSON.stringify([issuer.settings(PROVIDER), offline]) } });
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'providers-test-owner' });
});

afterAll(async () => {
  await gateway?.close();
  await issuer?.close();
  await owner?.end();
});

type Body = Record<string, unknown>;

/** A person at the provider, with an address of their own unless told otherwise. */
function personAtProvider(overrides: Partial<IssuerAccount> = {}): IssuerAccount {
  const person = { sub: `sub-${newId()}`, email: uniqueEmail('oidc'), email_verified: true, given_name: 'Grace', family_name: 'Hopper', name: 'Grace Hopper', ...overrides };
  issuer.addAccount(person);
  return person;
}

const callbackPath = (redirect: URL): string => `/auth/callback/${PROVIDER}${redirect.search}`;

function callback(redirect: URL, token?: string): Promise<JsonResponse<Body>> {
  return get(gateway, callbackPath(redirect), token);
}

async function startSignIn(): Promise<URL> {
  const started = await post(gateway, `/auth/login/${PROVIDER}`, undefined);
  expect(started.status).toBe(200);
  return new URL(String(started.body.url));
}

/** The whole round trip: start, sign in at the provider, hand the code to the gateway. */
async function signInWithProvider(person: IssuerAccount): Promise<JsonResponse<Body>> {
  return callback(await issuer.signIn((await startSignIn()).toString(), person.sub));
}

async function startLink(account: RegisteredAccount, userId = account.user.id): Promise<JsonResponse<Body>> {
  return call(`${gateway.baseUrl}/v1/users/${userId}/providers/${PROVIDER}`, { method: 'POST', headers: bearer(account.accessToken) });
}

/** Links the provider person to the account through the API, as the account holder does it. */
async function link(account: RegisteredAccount, person: IssuerAccount): Promise<JsonResponse<Body>> {
  const started = await startLink(account);
  expect(started.status).toBe(200);
  return callback(await issuer.signIn(String(started.body.url), person.sub), account.accessToken);
}

function unlink(token: string, userId: string): Promise<JsonResponse<Body>> {
  return call(`${gateway.baseUrl}/v1/users/${userId}/providers/${PROVIDER}`, { method: 'DELETE', headers: bearer(token) });
}

async function me(token: string): Promise<Body> {
  const response = await get(gateway, '/auth/me', token);
  expect(response.status).toBe(200);
  return response.body;
}

const accountsWithEmail = (email: string) =>
  owner.oneFirst(sql.type(z.object({ count: z.number() }))`SELECT count(*)::int AS count FROM users WHERE email = ${email}`);

describe('providers and the start of a sign-in', () => {
  it('lists the configured providers without anything secret', async () => {
    const response = await get(gateway, '/auth/providers');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: [{ id: PROVIDER, name: 'Test OIDC', type: 'oidc' }, { id: 'offline', name: 'Offline', type: 'oidc' }] });
  });

  it('answers the provider URL with PKCE S256, state and nonce', async () => {
    const url = await startSignIn();
    expect(url.origin + url.pathname).toBe(`${issuer.issuer}/auth`);
    const params = Object.fromEntries(url.searchParams);
    expect(params).toMatchObject({
      response_type: 'code', client_id: TEST_CLIENT.id, redirect_uri: TEST_CLIENT.redirectUri,
      scope: 'openid email profile', code_challenge_method: 'S256',
    });
    expect(params.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Every start is a new flow.
    expect((await startSignIn()).searchParams.get('state')).not.toBe(params.state);
  });

  it('answers 404 for a provider that is not configured', async () => {
    const response = await post(gateway, '/auth/login/nobody', undefined);
    expect(response.status).toBe(404);
    expect(response.body.type).toBe(gateway.problemType('not-found'));
  });

  it('answers 502 bad-gateway when the provider cannot be reached', async () => {
    const response = await post(gateway, '/auth/login/offline', undefined);
    expect(response.status).toBe(502);
    expect(response.body.type).toBe(gateway.problemType('bad-gateway'));
  });
});

describe('sign-in by provider', () => {
  // The issuer keeps scope claims out of the ID token (as OIDC Core allows for the code flow), so
  // the address of a new account comes from its userinfo endpoint.
  it('creates the account and its tenant on the first sign-in, and finds it on the second', async () => {
    const person = personAtProvider();
    const first = await signInWithProvider(person);
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(['accessToken', 'expiresAt', 'refreshToken']);
    const created = await me(String(first.body.accessToken));
    expect(created).toMatchObject({
      email: person.email, firstName: 'Grace', lastName: 'Hopper', emailVerified: true, roles: ['owner'], permissions: ['*'],
    });

    const second = await signInWithProvider(person);
    expect(second.status).toBe(200);
    const found = await me(String(second.body.accessToken));
    expect(found).toMatchObject({ id: created.id, tenantId: created.tenantId });
    expect(await accountsWithEmail(person.email!)).toBe(1);

    const events = await outboxEventsOf(owner, String(created.tenantId));
    expect(events.filter((event) => event.type === 'auth.user.created')).toHaveLength(1);
    expect(events.find((event) => event.type === 'auth.user.logged_in')).toMatchObject({
      data: { user_id: created.id, method: 'oidc', provider: PROVIDER },
    });
    const links = await get(gateway, `/users/${String(created.id)}/providers`, String(second.body.accessToken));
    expect(links.body).toEqual({
      data: [{
        id: expect.any(String), providerId: PROVIDER, providerType: 'oidc', externalId: person.sub, email: person.email,
        displayName: 'Grace Hopper', linkedAt: expect.any(String),
      }],
    });
  });

  it('answers the tenant-selection result for an account of several tenants', async () => {
    const person = personAtProvider();
    const first = await signInWithProvider(person);
    const created = await me(String(first.body.accessToken));
    const other = await registerAccount(gateway);
    await addMembership(owner, other.tenant.id, String(created.id));
    const second = await signInWithProvider(person);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ requiresTenantSelection: true, sessionToken: expect.any(String) });
    expect((second.body.tenants as Body[]).map((tenant) => tenant.id).sort()).toEqual([created.tenantId, other.tenant.id].sort());
  });

  it('refuses a replayed or unknown state with 401, and a state is spent even by a failed callback', async () => {
    const person = personAtProvider();
    const redirect = await issuer.signIn((await startSignIn()).toString(), person.sub);
    expect((await callback(redirect)).status).toBe(200);
    const replay = await callback(redirect);
    expect(replay.status).toBe(401);
    expect(replay.body.type).toBe(gateway.problemType('unauthorized'));

    const forged = new URL(redirect);
    forged.searchParams.set('state', 'a-state-the-gateway-never-issued');
    expect((await callback(forged)).status).toBe(401);

    const declined = new URL(TEST_CLIENT.redirectUri);
    declined.searchParams.set('state', String((await startSignIn()).searchParams.get('state')));
    declined.searchParams.set('error', 'access_denied');
    declined.searchParams.set('iss', issuer.issuer);
    const refusal = await callback(declined);
    expect(refusal.status).toBe(401);
    expect(refusal.body.detail).toContain('access_denied');
    expect((await callback(declined)).body.detail).toMatch(/state/);
  });

  it('refuses an ID token issued for another sign-in (nonce) and creates nothing', async () => {
    const person = personAtProvider();
    const url = await startSignIn();
    url.searchParams.set('nonce', 'the-nonce-of-another-sign-in');
    const response = await callback(await issuer.signIn(url.toString(), person.sub));
    expect(response.status).toBe(401);
    expect(response.body.detail).toMatch(/nonce/);
    expect(await accountsWithEmail(person.email!)).toBe(0);
  });

  it('refuses an ID token whose payload was changed after signing', async () => {
    const person = personAtProvider();
    issuer.tamperNextIdToken((idToken) => {
      const [header, , signature] = idToken.split('.');
      const payload = { ...decodeJwt(idToken), sub: 'someone-else', email: 'victim@example.test' };
      return [header, Buffer.from(JSON.stringify(payload)).toString('base64url'), signature].join('.');
    });
    const response = await signInWithProvider(person);
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ type: gateway.problemType('unauthorized'), detail: 'The ID token is not valid' });
    expect(await accountsWithEmail(person.email!)).toBe(0);
  });

  it('refuses an ID token signed with HS256 and the client secret (no symmetric algorithms)', async () => {
    const person = personAtProvider();
    issuer.tamperNextIdToken((idToken) => new SignJWT(decodeJwt(idToken))
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(TEST_CLIENT.secret)));
    const response = await signInWithProvider(person);
    expect(response.status).toBe(401);
    expect(response.body.detail).toBe('The ID token is not valid');
    expect(await accountsWithEmail(person.email!)).toBe(0);
  });

  it('refuses a code carried to the gateway under another sign-in\'s state (PKCE)', async () => {
    const person = personAtProvider();
    const stolen = await issuer.signIn((await startSignIn()).toString(), person.sub);
    const injected = new URL(stolen);
    injected.searchParams.set('state', String((await startSignIn()).searchParams.get('state')));
    const response = await callback(injected);
    expect(response.status).toBe(401);
    expect(response.body.detail).toBe('The provider refused the authorization code');
    expect(await accountsWithEmail(person.email!)).toBe(0);
  });

  it('refuses a response that names another issuer (mix-up)', async () => {
    const person = personAtProvider();
    const redirect = await issuer.signIn((await startSignIn()).toString(), person.sub);
    redirect.searchParams.set('iss', 'https://evil.example.test');
    const response = await callback(redirect);
    expect(response.status).toBe(401);
    expect(response.body.detail).toMatch(/issuer/);
  });

  it('links by address only when both the provider and the account have verified it', async () => {
    const holder = await registerAccount(gateway);
    const unverified = personAtProvider({ email: holder.user.email });
    const refused = await signInWithProvider(unverified);
    expect(refused.status).toBe(409);
    expect(refused.body.type).toBe(gateway.problemType('conflict'));

    await owner.query(sql.unsafe`UPDATE users SET email_verified = true WHERE id = ${holder.user.id}`);
    const unverifiedAtProvider = personAtProvider({ email: holder.user.email, email_verified: false });
    expect((await signInWithProvider(unverifiedAtProvider)).status).toBe(409);

    const response = await signInWithProvider(unverified);
    expect(response.status).toBe(200);
    expect(await me(String(response.body.accessToken))).toMatchObject({ id: holder.user.id, tenantId: holder.tenant.id });
  });

  it('refuses a soft-deleted account', async () => {
    const person = personAtProvider();
    const created = await me(String((await signInWithProvider(person)).body.accessToken));
    await owner.query(sql.unsafe`UPDATE users SET deleted_at = now() WHERE id = ${String(created.id)}`);
    const response = await signInWithProvider(person);
    expect(response.status).toBe(401);
  });
});

describe('provider links', () => {
  it('links a provider to an existing account, which the provider then signs in to', async () => {
    const account = await registerAccount(gateway);
    const person = personAtProvider();
    const linked = await link(account, person);
    expect(linked.status).toBe(200);
    expect(linked.body).toMatchObject({ providerId: PROVIDER, providerType: 'oidc', externalId: person.sub, email: person.email });

    const list = await get(gateway, `/users/${account.user.id}/providers`, account.accessToken);
    expect(list.body.data).toEqual([linked.body]);
    const signedIn = await signInWithProvider(person);
    expect(await me(String(signedIn.body.accessToken))).toMatchObject({ id: account.user.id, tenantId: account.tenant.id });

    const audit = await outboxEventsOf(owner, account.tenant.id);
    expect(audit.find((event) => event.type === 'audit.record.created' && event.data.action === 'auth.provider.linked')).toMatchObject({
      data: { entityType: 'user', entityId: account.user.id, actorId: account.user.id },
    });
  });

  it('needs the bearer token of the account that started the link at the callback', async () => {
    const account = await registerAccount(gateway);
    const intruder = await registerAccount(gateway);
    const person = personAtProvider();
    for (const token of [undefined, intruder.accessToken]) {
      const started = await startLink(account);
      const response = await callback(await issuer.signIn(String(started.body.url), person.sub), token);
      expect(response.status).toBe(401);
    }
    expect((await get(gateway, `/users/${account.user.id}/providers`, account.accessToken)).body.data).toEqual([]);
  });

  it('lets only the account holder start a link', async () => {
    const account = await registerAccount(gateway);
    const other = await registerAccount(gateway);
    const response = await startLink(account, other.user.id);
    expect(response.status).toBe(403);
    expect(response.body.type).toBe(gateway.problemType('forbidden'));
  });

  it('answers 409 provider-already-linked for an identity linked to another account', async () => {
    const first = await registerAccount(gateway);
    const second = await registerAccount(gateway);
    const person = personAtProvider();
    expect((await link(first, person)).status).toBe(200);
    const response = await link(second, person);
    expect(response.status).toBe(409);
    expect(response.body.type).toBe(gateway.problemType('provider-already-linked'));
  });

  it('answers 409 conflict when the account already has a link to the provider', async () => {
    const account = await registerAccount(gateway);
    expect((await link(account, personAtProvider())).status).toBe(200);
    const response = await startLink(account);
    expect(response.status).toBe(409);
    expect(response.body.type).toBe(gateway.problemType('conflict'));
  });

  it('refuses to unlink the only way to sign in with 400 last-provider', async () => {
    const person = personAtProvider();
    const session = await signInWithProvider(person);
    const token = String(session.body.accessToken);
    const created = await me(token);
    const response = await unlink(token, String(created.id));
    expect(response.status).toBe(400);
    expect(response.body.type).toBe(gateway.problemType('last-provider'));
    expect((await get(gateway, `/users/${String(created.id)}/providers`, token)).body.data).toHaveLength(1);
  });

  it('unlinks when the account has a password, after which the provider no longer reaches it', async () => {
    const account = await registerAccount(gateway);
    const person = personAtProvider();
    expect((await link(account, person)).status).toBe(200);
    const response = await unlink(account.accessToken, account.user.id);
    expect(response.status).toBe(204);
    expect((await get(gateway, `/users/${account.user.id}/providers`, account.accessToken)).body.data).toEqual([]);
    expect((await unlink(account.accessToken, account.user.id)).status).toBe(404);

    // The person's address is their own, so the next sign-in makes a new account.
    const signedIn = await signInWithProvider(person);
    expect((await me(String(signedIn.body.accessToken))).id).not.toBe(account.user.id);
  });

  it('shows another account\'s links only to users.list holders of its tenant', async () => {
    const account = await registerAccount(gateway);
    const member = await registerAccount(gateway);
    await addMembership(owner, account.tenant.id, member.user.id, 'member');
    const memberInTenant = await post(gateway, '/auth/switch-tenant', { tenantId: account.tenant.id }, bearer(member.accessToken));
    const stranger = await registerAccount(gateway);

    expect((await get(gateway, `/users/${account.user.id}/providers`, String(memberInTenant.body.accessToken))).status).toBe(403);
    expect((await get(gateway, `/users/${member.user.id}/providers`, account.accessToken)).status).toBe(200);
    expect((await get(gateway, `/users/${stranger.user.id}/providers`, account.accessToken)).status).toBe(404);
    expect((await unlink(account.accessToken, stranger.user.id)).status).toBe(404);
  });

  it('needs a bearer token for the link routes', async () => {
    const account = await registerAccount(gateway);
    expect((await get(gateway, `/users/${account.user.id}/providers`)).status).toBe(401);
    expect((await call(`${gateway.baseUrl}/v1/users/${account.user.id}/providers/${PROVIDER}`, { method: 'POST' })).status).toBe(401);
  });
});
