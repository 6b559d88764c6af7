import { performance } from 'node:perf_hooks';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import {
  addMembership, outboxEventsOf, post, registerAccount, uniqueEmail, type RegisteredAccount,
} from '../../helpers/identity';
import { linkToken, mailsTo, startMailGateway, waitForMail, type MailGateway } from '../../helpers/mail';

/**
 * Password reset through the whole mail path: POST /auth/request-reset mails a link only for an
 * existing account, answering the same 202 in the same time either way; POST /auth/reset-password
 * sets the password once and signs the account out in every tenant.
 */
jest.setTimeout(120_000);

let mail: MailGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  mail = await startMailGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'password-reset-test-owner' });
});

afterAll(async () => {
  await mail?.close();
  await owner?.end();
});

const NEW_PASSWORD = 'another-long-passphrase-7';
const requestReset = (email: string) => post(mail.gateway, '/auth/request-reset', { email });
const login = (email: string, password: string) => post(mail.gateway, '/auth/login', { email, password });

/** The link of the reset mail (registration sent a verification mail too). */
async function resetToken(account: RegisteredAccount): Promise<string> {
  return linkToken(await waitForMail(account.user.email, 'Reset your password'));
}

describe('request-reset and reset-password', () => {
  it('mails a link that sets the new password, revokes every session in every tenant and emits auth.password.changed', async () => {
    const { gateway } = mail;
    const account = await registerAccount(gateway);
    const other = await registerAccount(gateway);
    await addMembership(owner, other.tenant.id, account.user.id);
    // A second session, in the other tenant.
    const selection = await login(account.user.email, account.password);
    const inOther = await post(gateway, '/auth/select-tenant', { sessionToken: selection.body.sessionToken, tenantId: other.tenant.id });
    expect(inOther.status).toBe(200);

    const requested = await requestReset(account.user.email);
    expect(requested.status).toBe(202);
    expect(requested.body).toBe('');
    const token = await resetToken(account);

    const reset = await post(gateway, '/auth/reset-password', { token, password: NEW_PASSWORD });
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual({ message: expect.any(String) });

    for (const refreshToken of [account.refreshToken, inOther.body.refreshToken]) {
      expect((await post(gateway, '/auth/refresh', { refreshToken })).body).toMatchObject({ status: 401 });
    }
    expect((await login(account.user.email, account.password)).body).toMatchObject({ type: gateway.problemType('invalid-credentials') });
    expect((await login(account.user.email, NEW_PASSWORD)).status).toBe(200);

    const events = await outboxEventsOf(owner, account.tenant.id);
    expect(events.find((event) => event.type === 'auth.password.changed')).toMatchObject({
      partitionKey: account.user.id,
      data: { user_id: account.user.id, tenant_id: account.tenant.id, method: 'reset', sessions_revoked: 2 },
    });

    // Single use.
    const replayed = await post(gateway, '/auth/reset-password', { token, password: 'yet-another-passphrase-9' });
    expect(replayed.body).toMatchObject({ status: 401, type: gateway.problemType('unauthorized') });
  });

  it('checks the new password like registration, and a refused one leaves the link usable', async () => {
    const { gateway } = mail;
    const account = await registerAccount(gateway);
    await requestReset(account.user.email);
    const token = await resetToken(account);

    const tooShort = await post(gateway, '/auth/reset-password', { token, password: 'short-pw' });
    expect(tooShort.body).toMatchObject({ status: 400, errors: [{ field: 'password', code: 'TOO_SHORT' }] });
    const breached = await post(gateway, '/auth/reset-password', { token, password: 'password1234' });
    expect(breached.body).toMatchObject({ status: 400, errors: [{ field: 'password', code: 'BREACHED_PASSWORD' }] });
    expect((await post(gateway, '/auth/reset-password', { token, password: NEW_PASSWORD })).status).toBe(200);
  });

  it('answers 401 token-expired for a reset link past its hour', async () => {
    const { gateway } = mail;
    const account = await registerAccount(gateway);
    await requestReset(account.user.email);
    const token = await resetToken(account);
    await owner.query(sql.unsafe`
      UPDATE one_time_tokens SET expires_at = now() - interval '1 second' WHERE user_id = ${account.user.id} AND purpose = 'reset_password'
    `);
    expect((await post(gateway, '/auth/reset-password', { token, password: NEW_PASSWORD })).body)
      .toMatchObject({ status: 401, type: gateway.problemType('token-expired') });
    expect((await login(account.user.email, account.password)).status).toBe(200);
  });

  it('answers the same 202 for an unknown address and mails nothing there', async () => {
    const unknown = uniqueEmail('nobody');
    const account = await registerAccount(mail.gateway);
    const forUnknown = await requestReset(unknown);
    const forKnown = await requestReset(account.user.email);
    expect(forUnknown.status).toBe(202);
    expect(forUnknown.body).toBe(forKnown.body);
    expect([...forUnknown.headers.keys()].sort()).toEqual([...forKnown.headers.keys()].sort());
    // The known address's mail was started after the unknown one's lookup; once it is there, nothing came for the unknown.
    await resetToken(account);
    expect(await mailsTo(unknown)).toEqual([]);
  });

  it('takes the same time whether or not the address has an account', async () => {
    const account = await registerAccount(mail.gateway);
    await waitForMail(account.user.email);
    const samples: Record<'known' | 'unknown', number[]> = { known: [], unknown: [] };
    // Interleaved in a shuffled order, so drift in the machine's load affects both alike; one
    // request of each kind first, so neither kind pays for warming up.
    const order = Array.from({ length: 80 }, (_, i): 'known' | 'unknown' => (i % 2 === 0 ? 'known' : 'unknown'))
      .sort(() => Math.random() - 0.5);
    for (const kind of ['known', 'unknown'] as const) await requestReset(kind === 'known' ? account.user.email : uniqueEmail('nobody'));
    for (const kind of order) {
      const email = kind === 'known' ? account.user.email : uniqueEmail('nobody');
      const started = performance.now();
      const response = await requestReset(email);
      samples[kind].push(performance.now() - started);
      expect(response.status).toBe(202);
    }
    // Mann-Whitney U: do the two timing samples come from one distribution? It uses only the order
    // of the samples, so the odd slow one (a GC pause, another process) cannot swing it. Under equal
    // distributions |z| exceeds 3.5 about once in 2000 runs; one path doing a database lookup, a
    // token insert or a Temporal start in the request (about a millisecond each) lands far beyond it.
    expect(Math.abs(mannWhitneyZ(samples.known, samples.unknown))).toBeLessThan(3.5);
  });
});

/** The z score of the Mann-Whitney U statistic (normal approximation, ties given their average rank). */
function mannWhitneyZ(a: number[], b: number[]): number {
  const all = [...a.map((value) => ({ value, inA: true })), ...b.map((value) => ({ value, inA: false }))]
    .sort((x, y) => x.value - y.value);
  const ranks = new Array<number>(all.length);
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j + 1 < all.length && all[j + 1].value === all[i].value) j++;
    for (let k = i; k <= j; k++) ranks[k] = (i + j) / 2 + 1;
    i = j + 1;
  }
  const rankSumA = all.reduce((sum, sample, i) => (sample.inA ? sum + ranks[i] : sum), 0);
  const u = rankSumA - (a.length * (a.length + 1)) / 2;
  const mean = (a.length * b.length) / 2;
  const sd = Math.sqrt((a.length * b.length * (a.length + b.length + 1)) / 12);
  return (u - mean) / sd;
}
