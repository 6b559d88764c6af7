import { newId } from '../../../common/ids';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import type { JsonResponse } from '../../helpers/http';
import {
  addMembership, get, outboxEventsOf, post, registerAccount, uniqueEmail, type RegisteredAccount,
} from '../../helpers/identity';
import { turnOnMfa, type MfaAccount } from '../../helpers/mfa';
import { startOidcIssuer, type TestIssuer } from '../../helpers/oidc-issuer';
import { currentStep, totp } from '../../helpers/totp';

/**
 * Sign-in through an OpenID provider (a real local issuer) for accounts with two-factor on: the
 * callback hands out no tokens but the mfa-required challenge, which POST /auth/mfa/challenge
 * completes with a TOTP code or a recovery code. And a provider sign-in that goes through tenant
 * selection reports its own method, not `password`.
 */
const PROVIDER = 'mfa-oidc';

let issuer: TestIssuer;
let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  issuer = await startOidcIssuer();
  gateway = await startTestGateway({ env: { AUTH_PROVIDERS: JSON.stringify([issuer.settings(PROVIDER)]) } });
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'provider-mfa-test-owner' });
});

afterAll(async () => {
  await gateway?.close();
  await issuer?.close();
  await owner?.end();
});

type Body = Record<string, unknown>;

interface ProviderAccount {
  sub: string;
  userId: string;
  tenantId: string;
  accessToken: string;
}

/** The whole provider round trip as a browser makes it: start, sign in at the issuer, callback. */
async function providerSignIn(sub: string): Promise<JsonResponse<Body>> {
  const started = await post(gateway, `/auth/login/${PROVIDER}`, undefined);
  expect(started.status).toBe(200);
  const redirect = await issuer.signIn(String(started.body.url), sub);
  return get(gateway, `/auth/callback/${PROVIDER}${redirect.search}`);
}

/** A person at the provider whose first sign-in created an account (with its own tenant, no password). */
async function providerAccount(): Promise<ProviderAccount> {
  const sub = `sub-${newId()}`;
  issuer.addAccount({ sub, email: uniqueEmail('oidc-mfa'), email_verified: true, given_name: 'Grace', family_name: 'Hopper' });
  const first = await providerSignIn(sub);
  expect(first.status).toBe(200);
  const accessToken = String(first.body.accessToken);
  const me = (await get(gateway, '/auth/me', accessToken)).body;
  return { sub, userId: String(me.id), tenantId: String(me.tenantId), accessToken };
}

async function withMfa(account: ProviderAccount): Promise<MfaAccount> {
  return turnOnMfa(gateway, { accessToken: account.accessToken } as RegisteredAccount);
}

/** The callback's challenge: 401 mfa-required like a password login, plus the token that completes it. */
async function challenged(account: ProviderAccount): Promise<string> {
  const response = await providerSignIn(account.sub);
  expect(response.status).toBe(401);
  expect(response.body).toMatchObject({
    type: gateway.problemType('mfa-required'), status: 401, mfaToken: expect.any(String), expiresAt: expect.any(String),
  });
  expect(response.body).not.toHaveProperty('accessToken');
  const ttl = Date.parse(String(response.body.expiresAt)) - Date.now();
  expect(ttl).toBeGreaterThan(250_000);
  expect(ttl).toBeLessThanOrEqual(300_000);
  return String(response.body.mfaToken);
}

const complete = (body: Body) => post(gateway, '/auth/mfa/challenge', body);

async function loginEvents(tenantId: string, userId: string): Promise<Body[]> {
  return (await outboxEventsOf(owner, tenantId))
    .filter((event) => event.type === 'auth.user.logged_in' && event.data.user_id === userId)
    .map((event) => event.data);
}

describe('two-factor on provider sign-in', () => {
  it('answers mfa-required instead of tokens, and a TOTP code completes the sign-in once', async () => {
    const account = await providerAccount();
    const { authenticator } = await withMfa(account);
    const mfaToken = await challenged(account);

    // A wrong code is mfa-invalid (a code of a step far away is certainly not accepted now).
    const wrong = await complete({ mfaToken, mfaCode: totp(authenticator.secret, currentStep() + 20) });
    expect(wrong.body).toMatchObject({ status: 401, type: gateway.problemType('mfa-invalid') });

    const code = await authenticator.nextCode();
    const done = await complete({ mfaToken, mfaCode: code });
    expect(done.status).toBe(200);
    expect(Object.keys(done.body).sort()).toEqual(['accessToken', 'expiresAt', 'refreshToken']);
    expect((await get(gateway, '/auth/me', String(done.body.accessToken))).body).toMatchObject({ id: account.userId, mfaEnabled: true });
    // The same code again (the token still valid) is a replay.
    expect((await complete({ mfaToken, mfaCode: code })).body).toMatchObject({ status: 401, type: gateway.problemType('mfa-invalid') });

    const events = await loginEvents(account.tenantId, account.userId);
    expect(events.at(-1)).toMatchObject({ method: 'oidc', provider: PROVIDER });
  });

  it('completes with a recovery code, which is used up', async () => {
    const account = await providerAccount();
    const { recoveryCodes } = await withMfa(account);
    const mfaToken = await challenged(account);

    expect((await complete({ mfaToken, recoveryCode: 'zzzzzzzzzzzz' })).body).toMatchObject({ status: 401, type: gateway.problemType('mfa-invalid') });
    const done = await complete({ mfaToken, recoveryCode: recoveryCodes[0] });
    expect(done.status).toBe(200);
    expect(Object.keys(done.body).sort()).toEqual(['accessToken', 'expiresAt', 'refreshToken']);
    const remaining = await get(gateway, '/auth/recovery-codes', String(done.body.accessToken));
    expect(remaining.body).toEqual({ remaining: 9 });
    expect((await complete({ mfaToken, recoveryCode: recoveryCodes[0] })).status).toBe(401);
    expect((await loginEvents(account.tenantId, account.userId)).at(-1)).toMatchObject({ method: 'recovery_code' });
  });

  it('takes the challenge token for the challenge only: not as a bearer or a session token, and no other token as a challenge', async () => {
    const account = await providerAccount();
    const { authenticator } = await withMfa(account);
    const mfaToken = await challenged(account);

    expect((await get(gateway, '/auth/me', mfaToken)).status).toBe(401);
    expect((await post(gateway, '/auth/select-tenant', { sessionToken: mfaToken, tenantId: account.tenantId, rememberChoice: false })).status).toBe(401);
    expect((await complete({ mfaToken: account.accessToken, mfaCode: await authenticator.nextCode() })).body)
      .toMatchObject({ status: 401, type: gateway.problemType('unauthorized') });
    // A password login's mfa-required carries no challenge token: the client sends the code with the password.
    const password = await registerAccount(gateway);
    await turnOnMfa(gateway, password);
    const passwordLogin = await post(gateway, '/auth/login', { email: password.user.email, password: password.password });
    expect(passwordLogin.body).toMatchObject({ status: 401, type: gateway.problemType('mfa-required') });
    expect(passwordLogin.body).not.toHaveProperty('mfaToken');
  });

  it('validates its body: the token and exactly one of mfaCode and recoveryCode', async () => {
    const cases: Body[] = [{ mfaCode: '123456' }, { mfaToken: 'x' }, { mfaToken: 'x', mfaCode: '123456', recoveryCode: 'abc' }, { mfaToken: 'x', mfaCode: '12345' }];
    for (const body of cases) expect((await complete(body)).status).toBe(400);
  });

  it('lets an account without two-factor in directly, as before', async () => {
    const account = await providerAccount();
    const again = await providerSignIn(account.sub);
    expect(again.status).toBe(200);
    expect(again.body).toHaveProperty('accessToken');
  });
});

describe('tenant selection after a provider sign-in', () => {
  async function twoTenants(account: ProviderAccount): Promise<RegisteredAccount> {
    const team = await registerAccount(gateway);
    await addMembership(owner, team.tenant.id, account.userId);
    return team;
  }

  it('reports the provider as the method of the session select-tenant opens', async () => {
    const account = await providerAccount();
    const team = await twoTenants(account);
    const selection = await providerSignIn(account.sub);
    expect(selection.body).toMatchObject({ requiresTenantSelection: true });

    const selected = await post(gateway, '/auth/select-tenant', { sessionToken: selection.body.sessionToken, tenantId: team.tenant.id, rememberChoice: false });
    expect(selected.status).toBe(200);
    expect((await loginEvents(team.tenant.id, account.userId))).toEqual([expect.objectContaining({ method: 'oidc', provider: PROVIDER })]);
  });

  it('after the second factor too, and a password login still reports password', async () => {
    const account = await providerAccount();
    const team = await twoTenants(account);
    const { authenticator } = await withMfa(account);
    const mfaToken = await challenged(account);
    const selection = await complete({ mfaToken, mfaCode: await authenticator.nextCode() });
    expect(selection.body).toMatchObject({ requiresTenantSelection: true });
    const selected = await post(gateway, '/auth/select-tenant', { sessionToken: selection.body.sessionToken, tenantId: team.tenant.id, rememberChoice: false });
    expect(selected.status).toBe(200);
    expect(await loginEvents(team.tenant.id, account.userId)).toEqual([expect.objectContaining({ method: 'oidc', provider: PROVIDER })]);

    const member = await registerAccount(gateway);
    await addMembership(owner, team.tenant.id, member.user.id);
    const passwordSelection = await post(gateway, '/auth/login', { email: member.user.email, password: member.password });
    await post(gateway, '/auth/select-tenant', { sessionToken: passwordSelection.body.sessionToken, tenantId: team.tenant.id, rememberChoice: false });
    expect(await loginEvents(team.tenant.id, member.user.id)).toEqual([expect.objectContaining({ method: 'password' })]);
  });
});
