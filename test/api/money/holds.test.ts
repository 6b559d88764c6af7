import { z } from 'zod';
import { newId } from '../../../common/ids';
import { sql, type DatabasePool } from '../../../db/pool';
import type { TestGateway } from '../../helpers/app';
import { waitFor } from '../../helpers/http';
import { bearer, post, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { fundedWallet, startMoneyFlowsFixture, walletOf, type MoneyFlowsFixture } from '../../helpers/money-flows';
import { expectLedgerConsistent } from '../../helpers/ledger';
import type { DevServer } from '../../helpers/temporal';

/**
 * Holds through the real gateway, with a worker of our own on the dev server (the platform's worker
 * runs older code): every route of both sets and every refusal, a hold expiring by itself, the hold
 * limit, idempotent retries that never start a second workflow, and the ledger invariant after each.
 */
jest.setTimeout(60_000);

const MAX_HOLDS = 3;
let fixture: MoneyFlowsFixture;
let gateway: TestGateway;
let server: DevServer;
let app: DatabasePool;
let owner: DatabasePool;
let account: RegisteredAccount;

beforeAll(async () => {
  fixture = await startMoneyFlowsFixture('money-holds', { MONEY_MAX_HOLDS_PER_WALLET: String(MAX_HOLDS) });
  ({ gateway, server, app, owner, account } = fixture);
});

afterAll(() => fixture?.close());

afterEach(async () => {
  await expectLedgerConsistent();
});

const withKey = (key = newId()) => ({ ...bearer(account.accessToken), 'idempotency-key': key });
const wallet = (amount: number) => fundedWallet(app, account.tenant.id, account.user.id, amount);
const hold = (walletId: string, body: Record<string, unknown>, key?: string) =>
  post(gateway, `/wallets/${walletId}/hold`, { currency: 'USD', reason: 'order 1', ...body }, withKey(key));

describe('POST /wallets/:id/hold', () => {
  it('moves available to frozen and answers the hold with its expiry', async () => {
    const walletId = await wallet(1000);
    const before = Date.now();
    const response = await hold(walletId, { amount: 300, ttl: '2h' });
    const after = Date.now();

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ walletId, type: 'hold', status: 'held', amount: 300, balanceAfter: { available: 700, frozen: 300, pending: 0 } });
    expect(response.body.transactionId).toBe(response.body.id);
    // expiresAt is now + ttl at some moment while the request ran: bracketed by before and after.
    const expiresAt = Date.parse(String(response.body.expiresAt));
    expect(expiresAt).toBeGreaterThanOrEqual(before + 2 * 3600_000);
    expect(expiresAt).toBeLessThanOrEqual(after + 2 * 3600_000);
    expect(await walletOf(app, account.tenant.id, walletId)).toMatchObject({ available: 700, frozen: 300 });
  });

  it('answers a retry with the same key and body with the same hold, from the same workflow', async () => {
    const walletId = await wallet(1000);
    const key = newId();
    const first = await hold(walletId, { amount: 100, ttl: 'PT30M' }, key);
    const again = await hold(walletId, { amount: 100, ttl: 'PT30M' }, key);
    const conflict = await hold(walletId, { amount: 101, ttl: 'PT30M' }, key);

    expect(again).toMatchObject({ status: 200, body: first.body });
    expect(conflict.status).toBe(409);
    expect(conflict.body.type).toBe(gateway.problemType('idempotency-conflict'));
    expect(await walletOf(app, account.tenant.id, walletId)).toMatchObject({ available: 900, frozen: 100 });
    const runs = [];
    for await (const run of server.client.workflow.list({ query: `WorkflowId = 'money.hold:${account.tenant.id}:${key}'` })) runs.push(run);
    expect(runs).toHaveLength(1);
  });

  it.each([
    ['no Idempotency-Key', { amount: 1 }, false, 400, 'validation-error'],
    ['a zero amount', { amount: 0 }, true, 400, 'invalid-amount'],
    ['a fractional amount', { amount: 1.5 }, true, 400, 'invalid-amount'],
    ['a string amount', { amount: '5' }, true, 400, 'invalid-amount'],
    ['a ttl over 168 h', { amount: 1, ttl: '169h' }, true, 400, 'validation-error'],
    ['a ttl under 1 s', { amount: 1, ttl: '0s' }, true, 400, 'validation-error'],
    ['a ttl outside the grammar', { amount: 1, ttl: '3 hours' }, true, 400, 'validation-error'],
    ['more than available', { amount: 5000 }, true, 400, 'insufficient-funds'],
    ['another currency', { amount: 1, currency: 'EUR' }, true, 400, 'validation-error'],
  ])('refuses %s', async (_name, body, sendKey, status, type) => {
    const walletId = await wallet(1000);
    const response = await post(gateway, `/wallets/${walletId}/hold`, { currency: 'USD', ...body }, sendKey ? withKey() : bearer(account.accessToken));
    expect(response.status).toBe(status);
    expect(response.body.type).toBe(gateway.problemType(type));
    expect(await walletOf(app, account.tenant.id, walletId)).toMatchObject({ available: 1000, frozen: 0 });
  });

  it('refuses a wallet of another tenant with 404 and one over the plan maxTxAmount with 402', async () => {
    const other = await registerAccount(gateway);
    const foreign = await fundedWallet(app, other.tenant.id, other.user.id, 1000);
    expect((await hold(foreign, { amount: 1 })).status).toBe(404);

    const walletId = await wallet(1000);
    const over = await hold(walletId, { amount: 10_000_001 });
    expect(over.status).toBe(402);
    expect(over.body).toMatchObject({ maxTxAmount: 10_000_000, limit: { resource: 'maxTxAmount' } });
  });

  it('refuses a caller whose e-mail is not verified with 403 (sensitive operation)', async () => {
    const unverified = await registerAccount(gateway);
    const walletId = await fundedWallet(app, unverified.tenant.id, unverified.user.id, 100);
    const response = await post(gateway, `/wallets/${walletId}/hold`, { amount: 1, currency: 'USD' }, { ...bearer(unverified.accessToken), 'idempotency-key': newId() });
    expect(response.status).toBe(403);
  });

  it(`allows at most MONEY_MAX_HOLDS_PER_WALLET (${MAX_HOLDS}) open holds`, async () => {
    const walletId = await wallet(1000);
    for (let i = 0; i < MAX_HOLDS; i += 1) expect((await hold(walletId, { amount: 1 })).status).toBe(200);
    const refused = await hold(walletId, { amount: 1 });
    expect(refused.status).toBe(429);
    expect(refused.body.type).toBe(gateway.problemType('hold-limit-exceeded'));
  });

  it('expires by itself at a 2-second TTL and returns the funds, with money.hold.expired', async () => {
    const walletId = await wallet(500);
    const placed = await hold(walletId, { amount: 200, ttl: '2s' });
    expect(placed.status).toBe(200);
    await waitFor('the hold to expire', async () => (await walletOf(app, account.tenant.id, walletId)).frozen === 0, 40_000, 100);

    expect(await walletOf(app, account.tenant.id, walletId)).toMatchObject({ available: 500, frozen: 0 });
    const row = await owner.one(sql.type(z.object({ status: z.string(), late: z.number() }))`
      SELECT status, extract(epoch FROM expired_at - expires_at)::float8 AS late FROM money_transactions WHERE id = ${String(placed.body.id)}
    `);
    expect(row.status).toBe('canceled');
    // Never early; how late depends on the timer, a workflow task and an activity on a busy machine,
    // so the bound only catches a hold left to the 60 s sweep instead of its own timer.
    expect(row.late).toBeGreaterThanOrEqual(0);
    expect(row.late).toBeLessThan(30);
    const events = await owner.any(sql.type(z.object({ type: z.string() }))`
      SELECT type FROM outbox_events WHERE tenant_id = ${account.tenant.id} AND partition_key = ${walletId} AND type = 'money.hold.expired'
    `);
    expect(events).toHaveLength(1);

    const late = await post(gateway, `/holds/${String(placed.body.id)}/confirm`, {}, withKey());
    expect(late.status).toBe(422);
    expect(late.body.type).toBe(gateway.problemType('hold-expired'));
  });
});

describe('confirm and cancel', () => {
  it('confirms through route set A and answers the confirm transaction; a retry replays it', async () => {
    const walletId = await wallet(1000);
    const placed = await hold(walletId, { amount: 400 });
    const key = newId();
    const confirmed = await post(gateway, `/holds/${String(placed.body.id)}/confirm`, { holdTransactionId: placed.body.id }, withKey(key));

    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ type: 'confirm', status: 'completed', amount: 400, referenceTransactionId: placed.body.id, balanceAfter: { available: 600, frozen: 0 } });
    const again = await post(gateway, `/holds/${String(placed.body.id)}/confirm`, {}, withKey(key));
    expect(again).toMatchObject({ status: 200, body: confirmed.body });
    const cancel = await post(gateway, `/holds/${String(placed.body.id)}/cancel`, {}, withKey());
    expect(cancel.status).toBe(400);
    expect(cancel.body.type).toBe(gateway.problemType('hold-settled'));
  });

  it('cancels through route set B, and refuses a hold of another wallet with 404', async () => {
    const walletId = await wallet(1000);
    const otherWallet = await wallet(0);
    const placed = await hold(walletId, { amount: 250 });

    const wrongWallet = await post(gateway, `/wallets/${otherWallet}/cancel`, { holdTransactionId: placed.body.id }, withKey());
    expect(wrongWallet.status).toBe(404);
    const canceled = await post(gateway, `/wallets/${walletId}/cancel`, { holdTransactionId: placed.body.id }, withKey());
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ type: 'cancel', status: 'completed', amount: 250, balanceAfter: { available: 1000, frozen: 0 } });
    expect(await walletOf(app, account.tenant.id, walletId)).toMatchObject({ available: 1000, frozen: 0 });
  });

  it('refuses to cancel a canceled hold with 400 hold-settled, whose status member is the HTTP status', async () => {
    const walletId = await wallet(100);
    const placed = await hold(walletId, { amount: 10 });
    expect((await post(gateway, `/holds/${String(placed.body.id)}/cancel`, {}, withKey())).status).toBe(200);

    const again = await post(gateway, `/holds/${String(placed.body.id)}/cancel`, {}, withKey());
    expect(again.status).toBe(400);
    // docs/reference/money.md#rule-8: a canceled hold is rejected with 400; the hold's own status travels as holdStatus.
    expect(again.body).toMatchObject({ type: gateway.problemType('hold-settled'), status: 400, holdStatus: 'canceled' });
  });

  it('refuses a missing key, an unknown hold and a path/body mismatch', async () => {
    const walletId = await wallet(100);
    const placed = await hold(walletId, { amount: 10 });
    expect((await post(gateway, `/holds/${String(placed.body.id)}/confirm`, {}, bearer(account.accessToken))).status).toBe(400);
    expect((await post(gateway, `/holds/${newId()}/confirm`, {}, withKey())).status).toBe(404);
    expect((await post(gateway, `/holds/${String(placed.body.id)}/cancel`, { holdTransactionId: newId() }, withKey())).status).toBe(400);
  });
});
