import { enqueueEvents } from '../../../services/events/publish';
import { newId } from '../../../common/ids';
import { creditWallet } from '../../../services/money/wallet-operations';
import { withTenant } from '../../../db/tenant';
import type { DatabasePool } from '../../../db/pool';
import type { TestGateway } from '../../helpers/app';
import { call } from '../../helpers/http';
import { bearer, post, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { fundedWallet, startMoneyFlowsFixture, walletOf, type MoneyFlowsFixture } from '../../helpers/money-flows';
import { expectLedgerConsistent } from '../../helpers/ledger';
import type { DevServer } from '../../helpers/temporal';

/**
 * Transfers through the real gateway with a worker of our own on the dev server: both route sets,
 * every refusal, idempotent retries, and concurrent transfers in opposite directions between two
 * wallets (locked in ascending id order: no deadlock reaches a client), with the ledger invariant.
 */
jest.setTimeout(60_000);

let fixture: MoneyFlowsFixture;
let gateway: TestGateway;
let server: DevServer;
let app: DatabasePool;
let account: RegisteredAccount;

beforeAll(async () => {
  // The machine is shared by several test runs at once: the concurrency test's requests queue on
  // two wallet locks and may take longer than the default 5 s downstream deadline to be served.
  // Its 40 transfers at once are also more than a tenant's default in-flight bound (8), which
  // test/api/money/overload.test.ts covers; here every one of them is to be served.
  fixture = await startMoneyFlowsFixture('money-transfers', { GRPC_CALL_TIMEOUT_MS: '30000', MONEY_MAX_IN_FLIGHT_PER_TENANT: '64' });
  ({ gateway, server, app, account } = fixture);
});

afterAll(() => fixture?.close());

afterEach(async () => {
  await expectLedgerConsistent();
});

const withKey = (key = newId()) => ({ ...bearer(account.accessToken), 'idempotency-key': key });
const wallet = (amount: number, currency = 'USD') => fundedWallet(app, account.tenant.id, account.user.id, amount, currency);
const transfer = (body: Record<string, unknown>, key?: string, path = '/transfers') =>
  post(gateway, path, { currency: 'USD', reason: 'rent', ...body }, withKey(key));

describe.each(['/transfers', '/wallets/transfer'])('POST %s', (path) => {
  it('moves the amount and answers the outgoing transaction; the incoming one references it', async () => {
    const [from, to] = [await wallet(1000), await wallet(50)];
    const response = await transfer({ fromWalletId: from, toWalletId: to, amount: 300 }, undefined, path);

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ walletId: from, type: 'transfer', status: 'completed', amount: 300, counterpartyWalletId: to, balanceAfter: { available: 700 } });
    expect(await walletOf(app, account.tenant.id, from)).toMatchObject({ available: 700 });
    expect(await walletOf(app, account.tenant.id, to)).toMatchObject({ available: 350 });
  });
});

describe('transfers', () => {
  it('refuses a caller whose e-mail is not verified with 403, before any 404, and moves nothing', async () => {
    const unverified = await registerAccount(gateway);
    const [from, to] = [
      await fundedWallet(app, unverified.tenant.id, unverified.user.id, 100),
      await fundedWallet(app, unverified.tenant.id, unverified.user.id, 0),
    ];
    const send = (body: Record<string, unknown>) =>
      post(gateway, '/transfers', { currency: 'USD', reason: 'rent', amount: 1, ...body }, { ...bearer(unverified.accessToken), 'idempotency-key': newId() });
    expect((await send({ fromWalletId: from, toWalletId: to })).status).toBe(403);
    // The check rides on the wallets' lock, yet still comes first when there is no wallet to lock.
    const unknown = await send({ fromWalletId: '01ARZ3NDEKTSV4RRFFQ69G5FAV', toWalletId: '01ARZ3NDEKTSV4RRFFQ69G5FAW' });
    expect(unknown.status).toBe(403);
    expect(unknown.body).toMatchObject({ code: 'email-not-verified' });
    expect(await walletOf(app, unverified.tenant.id, from)).toMatchObject({ available: 100 });
  });

  it('answers a retry with the same answer, and the same key with another body with 409', async () => {
    const [from, to] = [await wallet(1000), await wallet(0)];
    const key = newId();
    const first = await transfer({ fromWalletId: from, toWalletId: to, amount: 10 }, key);
    const again = await transfer({ fromWalletId: from, toWalletId: to, amount: 10 }, key);
    const otherSet = await transfer({ fromWalletId: from, toWalletId: to, amount: 10 }, key, '/wallets/transfer');
    const conflict = await transfer({ fromWalletId: from, toWalletId: to, amount: 11 }, key);

    expect(again).toMatchObject({ status: 200, body: first.body });
    expect(otherSet).toMatchObject({ status: 200, body: first.body });
    expect(conflict.status).toBe(409);
    expect(conflict.body.type).toBe(gateway.problemType('idempotency-conflict'));
    expect(await walletOf(app, account.tenant.id, from)).toMatchObject({ available: 990 });
    const runs = [];
    for await (const run of server.client.workflow.list({ query: `WorkflowId = 'money.transfer:${account.tenant.id}:${key}'` })) runs.push(run);
    expect(runs).toHaveLength(1);
  });

  it('evaluates a refused request again under the same key (a refusal stores nothing)', async () => {
    const [from, to] = [await wallet(5), await wallet(0)];
    const key = newId();
    const refused = await transfer({ fromWalletId: from, toWalletId: to, amount: 10 }, key);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ type: gateway.problemType('insufficient-funds'), available: 5, requested: 10 });
    await fundedWalletTopUp(from);
    const retried = await transfer({ fromWalletId: from, toWalletId: to, amount: 10 }, key);
    expect(retried.status).toBe(200);
  });

  it.each([
    ['the same wallet twice', 'same', 400, 'validation-error'],
    ['a currency the wallets do not hold', 'currency', 400, 'validation-error'],
    ['wallets of different currencies', 'mixed', 400, 'validation-error'],
    ['another tenant\'s wallet', 'foreign', 404, 'not-found'],
    ['an unknown wallet', 'unknown', 404, 'not-found'],
    ['a zero amount', 'zero', 400, 'invalid-amount'],
    ['an amount above the plan maxTxAmount', 'over', 402, 'plan-limit-exceeded'],
  ])('refuses %s', async (_name, kind, status, type) => {
    const from = await wallet(1000);
    let to = await wallet(0);
    let body: Record<string, unknown> = { fromWalletId: from, toWalletId: to, amount: 1 };
    if (kind === 'same') body.toWalletId = from;
    if (kind === 'currency') body.currency = 'EUR';
    if (kind === 'mixed') body.toWalletId = await wallet(0, 'EUR');
    if (kind === 'foreign') {
      const other = await registerAccount(gateway);
      to = await fundedWallet(app, other.tenant.id, other.user.id, 0);
      body = { ...body, toWalletId: to };
    }
    if (kind === 'unknown') body.toWalletId = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
    if (kind === 'zero') body.amount = 0;
    if (kind === 'over') body.amount = 10_000_001;
    const response = await transfer(body);
    expect(response.status).toBe(status);
    expect(response.body.type).toBe(gateway.problemType(type));
    expect(await walletOf(app, account.tenant.id, from)).toMatchObject({ available: 1000 });
  });

  it('refuses a missing Idempotency-Key, or one that is not a UUID v4 or v7, with 400 validation-error', async () => {
    const [from, to] = [await wallet(10), await wallet(0)];
    const body = { fromWalletId: from, toWalletId: to, amount: 1, currency: 'USD' };
    const response = await post(gateway, '/transfers', body, bearer(account.accessToken));
    expect(response.status).toBe(400);
    const notUuid = await post(gateway, '/wallets/transfer', body, { ...bearer(account.accessToken), 'idempotency-key': 'transfer-1' });
    expect(notUuid.status).toBe(400);
    expect(notUuid.body).toMatchObject({ type: gateway.problemType('validation-error'), errors: [{ field: 'Idempotency-Key', code: 'INVALID_FORMAT' }] });
  });

  it('serves /wallets/transfer as POST only, although /wallets/:id (GET) matches the path too', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await call(`${gateway.baseUrl}/v1/wallets/transfer`, { method, headers: bearer(account.accessToken) });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
    const options = await call(`${gateway.baseUrl}/v1/wallets/transfer`, { method: 'OPTIONS' });
    expect(options.headers.get('allow')).toBe('POST, OPTIONS');
  });

  it('runs concurrent transfers in opposite directions between two wallets without a deadlock reaching a client', async () => {
    const [a, b] = [await wallet(10_000), await wallet(10_000)];
    const responses = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      transfer(i % 2 === 0 ? { fromWalletId: a, toWalletId: b, amount: 3 } : { fromWalletId: b, toWalletId: a, amount: 5 })));

    expect(responses.map((r) => r.status)).toEqual(Array(40).fill(200));
    expect(await walletOf(app, account.tenant.id, a)).toMatchObject({ available: 10_000 - 20 * 3 + 20 * 5 });
    expect(await walletOf(app, account.tenant.id, b)).toMatchObject({ available: 10_000 + 20 * 3 - 20 * 5 });
  });
});

/** Credits a wallet once more (the top-up after a refusal). */
async function fundedWalletTopUp(walletId: string): Promise<void> {
  await withTenant(app, account.tenant.id, async (tx) => {
    const topUp = await creditWallet(tx, { tenantId: account.tenant.id, actorId: account.user.id },
      { walletId, amount: 100, currency: 'USD', reason: 'top-up', meta: {}, idempotencyKey: null }, { planId: 'test', maxTxAmount: 0, maxBalance: 0 });
    await enqueueEvents(tx, topUp.events);
  });
}
