import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { bearer, get, outboxEventsOf, post, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { turnOnMfa } from '../../helpers/mfa';
import { currentStep, TestAuthenticator, totp } from '../../helpers/totp';

/** POST /v1/auth/mfa/enable, /verify, /disable and login with two-factor on. Codes come from test/helpers/totp.ts. */
let gateway: TestGateway;
let owner: DatabasePool;

// Low, so the slowing of wrong codes shows after a few; the IP threshold is out of reach (every test logs in from 127.0.0.1).
const ACCOUNT_ATTEMPTS = 3;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway({
    env: { LOGIN_THROTTLE_ACCOUNT_ATTEMPTS: String(ACCOUNT_ATTEMPTS), MFA_ISSUER: 'Platform Test' },
  });
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'mfa-test-owner' });
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

const login = (account: RegisteredAccount, mfaCode?: string) =>
  post(gateway, '/auth/login', { email: account.user.email, password: account.password, ...(mfaCode ? { mfaCode } : {}) });
const mfaPost = (account: RegisteredAccount, action: string, body: unknown = {}) => post(gateway, `/auth/mfa/${action}`, body, bearer(account.accessToken));
const mfaEnabledOf = async (account: RegisteredAccount) => (await get(gateway, '/auth/me', account.accessToken)).body.mfaEnabled;

/** Six digits that match no step of the current window. */
function wrongCode(secret: string): string {
  const valid = new Set([-1, 0, 1, 2].map((offset) => totp(secret, currentStep() + offset)));
  return ['000000', '111111', '222222'].find((code) => !valid.has(code))!;
}

describe('enable', () => {
  it('answers a base32 secret, its otpauth URL and a PNG QR code; two-factor stays off until verified', async () => {
    const account = await registerAccount(gateway);
    const response = await mfaPost(account, 'enable');
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['otpauthUrl', 'qrCode', 'secret']);
    const secret = String(response.body.secret);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(String(response.body.otpauthUrl));
    expect(url.protocol).toBe('otpauth:');
    expect(url.searchParams.get('secret')).toBe(secret);
    expect(url.searchParams.get('issuer')).toBe('Platform Test');
    expect(decodeURIComponent(url.pathname)).toBe(`/Platform Test:${account.user.email}`);
    expect(String(response.body.qrCode)).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    expect(await mfaEnabledOf(account)).toBe(false);
    // Pending, so login still needs no code.
    expect((await login(account)).status).toBe(200);
  });

  it('stores the secret encrypted, never in plain text', async () => {
    const account = await registerAccount(gateway);
    const { secret } = (await mfaPost(account, 'enable')).body as { secret: string };
    const stored = await owner.oneFirst(sql.type(z.object({ s: z.instanceof(Buffer) }))`SELECT mfa_secret AS s FROM users WHERE id = ${account.user.id}`);
    expect(stored.length).toBeGreaterThan(secret.length);
    expect(stored.includes(Buffer.from(secret))).toBe(false);
    expect(stored.toString('latin1')).not.toContain(secret);
  });

  it('replaces a pending secret when called again, and refuses with 409 once two-factor is on', async () => {
    const account = await registerAccount(gateway);
    const first = (await mfaPost(account, 'enable')).body.secret as string;
    const second = (await mfaPost(account, 'enable')).body.secret as string;
    expect(second).not.toBe(first);
    // The first secret no longer verifies; the second does.
    expect((await mfaPost(account, 'verify', { code: totp(first) })).body).toMatchObject({ status: 401, type: gateway.problemType('mfa-invalid') });
    expect((await mfaPost(account, 'verify', { code: await new TestAuthenticator(second).nextCode() })).status).toBe(200);
    expect((await mfaPost(account, 'enable')).body).toMatchObject({ status: 409, type: gateway.problemType('conflict') });
  });

  it('needs a bearer token', async () => {
    expect((await post(gateway, '/auth/mfa/enable', {})).status).toBe(401);
    expect((await post(gateway, '/auth/mfa/verify', { code: '123456' })).status).toBe(401);
    expect((await post(gateway, '/auth/mfa/disable', { password: 'x', code: '123456' })).status).toBe(401);
  });
});

describe('verify', () => {
  it('activates two-factor with an independently computed code and answers 10 new recovery codes', async () => {
    const account = await registerAccount(gateway);
    const { secret } = (await mfaPost(account, 'enable')).body as { secret: string };
    const response = await mfaPost(account, 'verify', { code: await new TestAuthenticator(secret).nextCode() });
    expect(response.status).toBe(200);
    expect(response.body.mfaEnabled).toBe(true);
    const codes = response.body.recoveryCodes as string[];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z0-9]{12}$/);
    expect(await mfaEnabledOf(account)).toBe(true);
    expect((await get(gateway, '/auth/recovery-codes', account.accessToken)).body).toEqual({ remaining: 10 });
    const audit = (await outboxEventsOf(owner, account.tenant.id)).filter((event) => event.type === 'audit.record.created');
    expect(audit.map((event) => event.data.action)).toContain('auth.mfa.enabled');
  });

  it('refuses a wrong code with 401 mfa-invalid and leaves two-factor off', async () => {
    const account = await registerAccount(gateway);
    const { secret } = (await mfaPost(account, 'enable')).body as { secret: string };
    expect((await mfaPost(account, 'verify', { code: wrongCode(secret) })).body).toMatchObject({ status: 401, type: gateway.problemType('mfa-invalid') });
    // A code of two steps ago is outside the ±1 window.
    expect((await mfaPost(account, 'verify', { code: totp(secret, currentStep() - 2) })).status).toBe(401);
    expect(await mfaEnabledOf(account)).toBe(false);
  });

  it('refuses with 409 when no setup is pending, and validates the code', async () => {
    const account = await registerAccount(gateway);
    expect((await mfaPost(account, 'verify', { code: '123456' })).body).toMatchObject({ status: 409, type: gateway.problemType('conflict') });
    const invalid = await mfaPost(account, 'verify', { code: '12345a' });
    expect(invalid.body).toMatchObject({ status: 400, errors: [expect.objectContaining({ field: 'code' })] });
    expect((await mfaPost(account, 'verify', {})).status).toBe(400);
  });
});

describe('login with two-factor on', () => {
  it('answers mfa-required without a code, mfa-invalid for a wrong one, a token pair for a good one, and refuses its replay', async () => {
    const account = await registerAccount(gateway);
    const { authenticator } = await turnOnMfa(gateway, account);

    expect((await login(account)).body).toMatchObject({ status: 401, type: gateway.problemType('mfa-required') });
    expect((await login(account, wrongCode(authenticator.secret))).body).toMatchObject({ status: 401, type: gateway.problemType('mfa-invalid') });
    const good = await login(account, await authenticator.nextCode());
    expect(good.status).toBe(200);
    expect(Object.keys(good.body).sort()).toEqual(['accessToken', 'expiresAt', 'refreshToken']);
    // The same code again, within its window: refused (RFC 6238 section 5.2).
    expect((await login(account, authenticator.lastCode())).body).toMatchObject({ status: 401, type: gateway.problemType('mfa-invalid') });
  });

  it('refuses the code that verified the setup as a login code (replay)', async () => {
    const account = await registerAccount(gateway);
    const { authenticator } = await turnOnMfa(gateway, account);
    expect((await login(account, authenticator.lastCode())).body).toMatchObject({ type: gateway.problemType('mfa-invalid') });
  });

  it('asks for the password first: a wrong password with a good code is invalid-credentials', async () => {
    const account = await registerAccount(gateway);
    const { authenticator } = await turnOnMfa(gateway, account);
    const response = await post(gateway, '/auth/login', { email: account.user.email, password: 'a-wrong-password', mfaCode: await authenticator.nextCode() });
    expect(response.body).toMatchObject({ status: 401, type: gateway.problemType('invalid-credentials') });
  });

  it('counts wrong codes in the login throttle, so codes cannot be guessed at speed', async () => {
    const account = await registerAccount(gateway);
    const { authenticator } = await turnOnMfa(gateway, account);
    for (let attempt = 0; attempt <= ACCOUNT_ATTEMPTS; attempt += 1) {
      expect((await login(account, wrongCode(authenticator.secret))).status).toBe(401);
    }
    const slowed = await login(account, await authenticator.nextCode());
    expect(slowed.body).toMatchObject({ status: 429, type: gateway.problemType('rate-limit-exceeded') });
    expect(Number(slowed.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('does not let the password alone clear the count (mfa-required is no success)', async () => {
    const account = await registerAccount(gateway);
    const { authenticator } = await turnOnMfa(gateway, account);
    for (let attempt = 0; attempt < ACCOUNT_ATTEMPTS; attempt += 1) {
      await login(account, wrongCode(authenticator.secret));
      expect((await login(account)).body).toMatchObject({ type: gateway.problemType('mfa-required') });
    }
    await login(account, wrongCode(authenticator.secret));
    expect((await login(account, await authenticator.nextCode())).status).toBe(429);
  });

  it('validates mfaCode', async () => {
    const account = await registerAccount(gateway);
    expect((await login(account, '12 456')).status).toBe(400);
  });
});

describe('disable', () => {
  it('needs the current password and a current code, then login needs no code', async () => {
    const account = await registerAccount(gateway);
    const { authenticator } = await turnOnMfa(gateway, account);
    expect((await mfaPost(account, 'disable', { password: 'a-wrong-password', code: authenticator.lastCode() })).body)
      .toMatchObject({ status: 401, type: gateway.problemType('invalid-credentials') });
    expect((await mfaPost(account, 'disable', { password: account.password })).body)
      .toMatchObject({ status: 401, type: gateway.problemType('mfa-required') });
    expect((await mfaPost(account, 'disable', { password: account.password, code: wrongCode(authenticator.secret) })).body)
      .toMatchObject({ status: 401, type: gateway.problemType('mfa-invalid') });
    // The code that verified the setup is spent.
    expect((await mfaPost(account, 'disable', { password: account.password, code: authenticator.lastCode() })).status).toBe(401);

    const response = await mfaPost(account, 'disable', { password: account.password, code: await authenticator.nextCode() });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ mfaEnabled: false });
    expect(await mfaEnabledOf(account)).toBe(false);
    expect((await login(account)).status).toBe(200);
    const stored = await owner.oneFirst(sql.type(z.object({ s: z.instanceof(Buffer).nullable() }))`SELECT mfa_secret AS s FROM users WHERE id = ${account.user.id}`);
    expect(stored).toBeNull();
    // Off already: 409.
    expect((await mfaPost(account, 'disable', { password: account.password, code: '123456' })).body).toMatchObject({ status: 409 });
  });

  it('allows two-factor to be turned on again with a new secret', async () => {
    const account = await registerAccount(gateway);
    const first = await turnOnMfa(gateway, account);
    await mfaPost(account, 'disable', { password: account.password, code: await first.authenticator.nextCode() });
    const second = await turnOnMfa(gateway, account);
    expect(second.authenticator.secret).not.toBe(first.authenticator.secret);
    expect((await login(account, await second.authenticator.nextCode())).status).toBe(200);
  });
});
