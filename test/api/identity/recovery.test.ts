import { createHash } from 'node:crypto';
import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { bearer, get, outboxEventsOf, post, registerAccount, uniqueEmail, type RegisteredAccount } from '../../helpers/identity';
import { turnOnMfa } from '../../helpers/mfa';

/**
 * Recovery codes (register, GET /auth/recovery-codes, POST /auth/recovery-codes/regenerate) and the
 * emergency login POST /v1/auth/recovery with its lockouts: 5 wrong codes within the window lock
 * recovery for an hour, 15 lock the account. Instead of waiting out a lock or a window, a test moves
 * the account's failure record back in time as the owner role.
 */
let gateway: TestGateway;
let owner: DatabasePool;

const WINDOW_SECONDS = 900;
const LOCK_SECONDS = 3600;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway({
    env: {
      RECOVERY_MAX_ATTEMPTS: '5', RECOVERY_WINDOW_SECONDS: String(WINDOW_SECONDS), RECOVERY_LOCK_SECONDS: String(LOCK_SECONDS),
      RECOVERY_ACCOUNT_LOCK_FAILURES: '15',
    },
  });
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'recovery-test-owner' });
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

const recover = (account: RegisteredAccount, recoveryCode: string, password = account.password) =>
  post(gateway, '/auth/recovery', { email: account.user.email, password, recoveryCode });
const remaining = async (account: RegisteredAccount) => (await get(gateway, '/auth/recovery-codes', account.accessToken)).body.remaining;
const auditActions = async (account: RegisteredAccount) => (await outboxEventsOf(owner, account.tenant.id))
  .filter((event) => event.type === 'audit.record.created').map((event) => event.data);

/** A well-formed code the account does not have. */
const WRONG_CODE = 'zzzzzzzzzzzz';

/** The hour of a recovery lock has passed. */
const endLock = (account: RegisteredAccount) =>
  owner.query(sql.unsafe`UPDATE recovery_failures SET locked_until = now() - interval '1 second' WHERE user_id = ${account.user.id}`);

async function failTimes(account: RegisteredAccount, times: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < times; i += 1) statuses.push((await recover(account, WRONG_CODE)).status);
  return statuses;
}

describe('recovery codes', () => {
  it('are answered once at registration: 10 alphanumeric codes, stored only as keyed hashes', async () => {
    const account = await registerAccount(gateway);
    const codes = account.recoveryCodes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z0-9]{12}$/);
    expect(await remaining(account)).toBe(10);

    const hashes = await owner.anyFirst(sql.type(z.object({ h: z.instanceof(Buffer) }))`SELECT code_hash AS h FROM recovery_codes WHERE user_id = ${account.user.id}`);
    expect(hashes).toHaveLength(10);
    const plain = new Set(codes.flatMap((code) => [Buffer.from(code).toString('hex'), createHash('sha256').update(code).digest('hex')]));
    for (const hash of hashes) expect(plain.has(hash.toString('hex'))).toBe(false);
  });

  it('are counted per caller and need a bearer token', async () => {
    const account = await registerAccount(gateway);
    const other = await registerAccount(gateway);
    await recover(other, other.recoveryCodes[0]);
    expect(await remaining(account)).toBe(10);
    expect(await remaining(other)).toBe(9);
    expect((await get(gateway, '/auth/recovery-codes')).status).toBe(401);
    expect((await post(gateway, '/auth/recovery-codes/regenerate', {})).status).toBe(401);
  });

  it('regenerate answers 10 new codes and the old ones stop working', async () => {
    const account = await registerAccount(gateway);
    const old = account.recoveryCodes;
    await recover(account, old[0]);
    expect(await remaining(account)).toBe(9);

    const response = await post<{ codes: string[] }>(gateway, '/auth/recovery-codes/regenerate', {}, bearer(account.accessToken));
    expect(response.status).toBe(200);
    expect(response.body.codes).toHaveLength(10);
    expect(response.body.codes.some((code) => old.includes(code))).toBe(false);
    expect(await remaining(account)).toBe(10);
    expect((await recover(account, old[1])).body).toMatchObject({ status: 401, type: gateway.problemType('mfa-invalid') });
    expect((await recover(account, response.body.codes[0])).status).toBe(200);
    expect((await auditActions(account)).map((record) => record.action)).toContain('auth.recovery_codes.regenerated');
  });

  it('are replaced when two-factor is activated', async () => {
    const account = await registerAccount(gateway);
    const { recoveryCodes } = await turnOnMfa(gateway, account);
    expect((await recover(account, (account.recoveryCodes)[0])).status).toBe(401);
    expect((await recover(account, recoveryCodes[0])).status).toBe(200);
  });
});

describe('recovery login', () => {
  it('answers a token pair for the password and a code, uses the code up, and refuses it a second time', async () => {
    const account = await registerAccount(gateway);
    const { recoveryCodes } = await turnOnMfa(gateway, account);
    const response = await recover(account, recoveryCodes[3]);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['accessToken', 'expiresAt', 'refreshToken']);
    const me = await get(gateway, '/auth/me', String(response.body.accessToken));
    expect(me.body).toMatchObject({ id: account.user.id, tenantId: account.tenant.id, mfaEnabled: true });
    expect(await remaining(account)).toBe(9);
    expect((await recover(account, recoveryCodes[3])).body).toMatchObject({ status: 401, type: gateway.problemType('mfa-invalid') });

    const events = await outboxEventsOf(owner, account.tenant.id);
    expect(events.find((event) => event.type === 'auth.user.logged_in' && event.data.method === 'recovery_code')).toBeDefined();
    expect((await auditActions(account)).find((record) => record.action === 'auth.recovery.used')).toMatchObject({ meta: { remainingCodes: 9 } });
  });

  it('accepts a code in upper case and grouped with a hyphen or spaces', async () => {
    const account = await registerAccount(gateway);
    const [first, second] = account.recoveryCodes;
    expect((await recover(account, `${first.slice(0, 6).toUpperCase()}-${first.slice(6).toUpperCase()}`)).status).toBe(200);
    expect((await recover(account, `${second.slice(0, 4)} ${second.slice(4, 8)} ${second.slice(8)}`)).status).toBe(200);
  });

  it('after a recovery lets two-factor be turned off with the password alone; before it a code is needed', async () => {
    const account = await registerAccount(gateway);
    const { recoveryCodes } = await turnOnMfa(gateway, account);
    expect((await post(gateway, '/auth/mfa/disable', { password: account.password }, bearer(account.accessToken))).body)
      .toMatchObject({ status: 401, type: gateway.problemType('mfa-required') });

    const recovered = await recover(account, recoveryCodes[0]);
    const token = String(recovered.body.accessToken);
    expect((await post(gateway, '/auth/mfa/disable', { password: 'a-wrong-password' }, bearer(token))).status).toBe(401);
    const disabled = await post(gateway, '/auth/mfa/disable', { password: account.password }, bearer(token));
    expect(disabled.status).toBe(200);
    expect((await get(gateway, '/auth/me', token)).body).toMatchObject({ mfaEnabled: false });
    expect((await post(gateway, '/auth/login', { email: account.user.email, password: account.password })).status).toBe(200);
  });

  it('answers invalid-credentials for a wrong password or an unknown address, without counting a recovery failure', async () => {
    const account = await registerAccount(gateway);
    const code = (account.recoveryCodes)[0];
    const wrong = await recover(account, code, 'a-wrong-password');
    const unknown = await post(gateway, '/auth/recovery', { email: uniqueEmail('nobody'), password: 'a-wrong-password', recoveryCode: code });
    for (const response of [wrong, unknown]) expect(response.body).toMatchObject({ status: 401, type: gateway.problemType('invalid-credentials') });
    expect(await owner.exists(sql.unsafe`SELECT 1 FROM recovery_failures WHERE user_id = ${account.user.id}`)).toBe(false);
    // The code was not spent.
    expect(await remaining(account)).toBe(10);
  });

  it('validates its body', async () => {
    const response = await post(gateway, '/auth/recovery', { email: 'not-an-address', password: '', recoveryCode: 'no/slashes', extra: 1 });
    expect(response.status).toBe(400);
    expect((response.body.errors as { field: string }[]).map((error) => error.field).sort()).toEqual(['email', 'extra', 'password', 'recoveryCode']);
  });
});

describe('recovery lockout', () => {
  it('locks recovery for an hour at the fifth wrong code (429, Retry-After) and alerts the owner; then a code works again', async () => {
    const account = await registerAccount(gateway);
    const codes = account.recoveryCodes;
    expect(await failTimes(account, 4)).toEqual([401, 401, 401, 401]);
    const fifth = await recover(account, WRONG_CODE);
    expect(fifth.body).toMatchObject({ status: 429, type: gateway.problemType('rate-limit-exceeded'), retryAfter: LOCK_SECONDS });
    expect(fifth.headers.get('retry-after')).toBe(String(LOCK_SECONDS));

    // Locked: even a good code is refused, and not spent.
    const locked = await recover(account, codes[0]);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(LOCK_SECONDS - 60);
    expect(await remaining(account)).toBe(10);
    // The lock concerns recovery only; the password still logs in.
    expect((await post(gateway, '/auth/login', { email: account.user.email, password: account.password })).status).toBe(200);

    const alert = (await auditActions(account)).find((record) => record.action === 'auth.recovery.locked');
    expect(alert).toMatchObject({ entityType: 'user', entityId: account.user.id, meta: { alert: 'account-owner', totalFailures: 5 } });

    await endLock(account);
    expect((await recover(account, codes[0])).status).toBe(200);
    expect(await owner.exists(sql.unsafe`SELECT 1 FROM recovery_failures WHERE user_id = ${account.user.id}`)).toBe(false);
  });

  it('counts wrong codes per window: once the window has passed, four more do not lock', async () => {
    const account = await registerAccount(gateway);
    expect(await failTimes(account, 4)).toEqual([401, 401, 401, 401]);
    await owner.query(sql.unsafe`
      UPDATE recovery_failures SET window_started_at = now() - make_interval(secs => ${WINDOW_SECONDS + 1}) WHERE user_id = ${account.user.id}
    `);
    expect(await failTimes(account, 4)).toEqual([401, 401, 401, 401]);
    expect((await recover(account, WRONG_CODE)).status).toBe(429);
  });

  it('locks the account at the fifteenth wrong code (three lockout cycles) and alerts the platform admin', async () => {
    const account = await registerAccount(gateway);
    const codes = account.recoveryCodes;
    for (let cycle = 0; cycle < 2; cycle += 1) {
      expect(await failTimes(account, 5)).toEqual([401, 401, 401, 401, 429]);
      await endLock(account);
    }
    expect(await failTimes(account, 4)).toEqual([401, 401, 401, 401]);
    expect((await recover(account, WRONG_CODE)).body).toMatchObject({ status: 403, type: gateway.problemType('account-locked') });

    const status = await owner.oneFirst(sql.type(z.object({ status: z.string() }))`SELECT status FROM users WHERE id = ${account.user.id}`);
    expect(status).toBe('locked');
    // Login and recovery are refused, even with the password and a good code.
    expect((await post(gateway, '/auth/login', { email: account.user.email, password: account.password })).body)
      .toMatchObject({ status: 403, type: gateway.problemType('account-locked') });
    expect((await recover(account, codes[0])).body).toMatchObject({ status: 403, type: gateway.problemType('account-locked') });
    // The sessions of the account end with it.
    expect((await post(gateway, '/auth/refresh', { refreshToken: account.refreshToken })).status).toBe(401);

    const actions = await auditActions(account);
    expect(actions.filter((record) => record.action === 'auth.recovery.locked')).toHaveLength(2);
    expect(actions.find((record) => record.action === 'auth.account.locked'))
      .toMatchObject({ entityId: account.user.id, meta: { alert: 'platform-admin', totalFailures: 15 } });
  });
});
