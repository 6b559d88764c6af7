import { newId } from '../../common/ids';
import type { DatabasePool } from '../../db/pool';
import type { Refused } from '../../workflows/money/money.messages';
import type { TestGateway } from '../helpers/app';
import { bearer, post, registerAccount, type RegisteredAccount } from '../helpers/identity';
import { fundedWallet, startMoneyFlowsFixture, type MoneyFlowsFixture } from '../helpers/money-flows';
import { expectLedgerConsistent } from '../helpers/ledger';
import type { DevServer } from '../helpers/temporal';

/**
 * A business refusal is an answer, not a fault (issue 15): a refused transfer or hold answers the
 * same problem as before, and its workflow completes with the refusal as its result instead of
 * failing, so an ordinary 4xx never shows as a failed workflow. A refused confirm or cancel fails its
 * Update only. Through the real gateway with a worker of our own on the dev server (Updates need it:
 * the time-skipping server drops their headers).
 */
jest.setTimeout(60_000);

let fixture: MoneyFlowsFixture;
let gateway: TestGateway;
let server: DevServer;
let app: DatabasePool;
let account: RegisteredAccount;

beforeAll(async () => {
  // One open hold per wallet, so a second hold is refused until the first is settled.
  fixture = await startMoneyFlowsFixture('money-refusals', { MONEY_MAX_HOLDS_PER_WALLET: '1' });
  ({ gateway, server, app, account } = fixture);
});

afterAll(() => fixture?.close());

afterEach(async () => {
  await expectLedgerConsistent();
});

const withKey = (key = newId()) => ({ ...bearer(account.accessToken), 'idempotency-key': key });
const wallet = (amount: number) => fundedWallet(app, account.tenant.id, account.user.id, amount);
const transfer = (body: Record<string, unknown>, key: string) => post(gateway, '/transfers', { currency: 'USD', reason: 'rent', ...body }, withKey(key));
const hold = (walletId: string, amount: number, key: string) =>
  post(gateway, `/wallets/${walletId}/hold`, { currency: 'USD', reason: 'order', amount, ttl: '1h' }, withKey(key));
const settle = (holdId: unknown, action: 'confirm' | 'cancel') => post(gateway, `/holds/${String(holdId)}/${action}`, {}, withKey());

/** The refusal a workflow completed with, after checking that it completed (not failed). */
async function refusalOf(workflowId: string): Promise<Refused['problem']> {
  const handle = server.client.workflow.getHandle(workflowId);
  const result = await handle.result() as Refused;
  expect((await handle.describe()).status.name).toBe('COMPLETED');
  expect(result.ok).toBe(false);
  return result.problem;
}

describe('a refused transfer', () => {
  it.each([
    ['funds the source does not hold', 'funds', 400, 'insufficient-funds'],
    ['another tenant\'s wallet', 'foreign', 404, 'not-found'],
    ['an amount above the plan maxTxAmount', 'over', 402, 'plan-limit-exceeded'],
    ['a currency the wallets do not hold', 'currency', 400, 'validation-error'],
  ])('of %s answers its problem, and its workflow completes with it', async (_name, kind, status, type) => {
    const from = await wallet(1000);
    const body: Record<string, unknown> = { fromWalletId: from, toWalletId: await wallet(0), amount: kind === 'funds' ? 1001 : 10 };
    if (kind === 'foreign') {
      const other = await registerAccount(gateway);
      body.toWalletId = await fundedWallet(app, other.tenant.id, other.user.id, 0);
    }
    if (kind === 'over') body.amount = 10_000_001;
    if (kind === 'currency') body.currency = 'EUR';
    const key = newId();

    const response = await transfer(body, key);

    expect(response.status).toBe(status);
    const problem = await refusalOf(`money.transfer:${account.tenant.id}:${key}`);
    expect(problem.type).toBe(type);
    // The answer is the refusal the workflow completed with: its type, detail and every extension member.
    expect(response.body).toMatchObject({ type: gateway.problemType(type), status, detail: problem.detail, ...problem.extensions });
    if (kind === 'funds') expect(problem.extensions).toEqual({ available: 1000, requested: 1001 });
  });
});

describe('a refused hold', () => {
  it('answers its problem, its workflow completes with it, and its key is evaluated again once the cause is gone', async () => {
    const walletId = await wallet(1000);
    const first = await hold(walletId, 100, newId());
    expect(first.status).toBe(200);
    const key = newId();
    const workflowId = `money.hold:${account.tenant.id}:${key}`;

    const refused = await hold(walletId, 100, key);

    expect(refused.status).toBe(429);
    const problem = await refusalOf(workflowId);
    expect(problem).toEqual({ type: 'hold-limit-exceeded', detail: refused.body.detail, extensions: { retryAfter: 60 } });
    expect(refused.body).toMatchObject({ type: gateway.problemType('hold-limit-exceeded'), retryAfter: 60 });
    const refusedRun = (await server.client.workflow.getHandle(workflowId).describe()).runId;

    // A refusal stores nothing: once the first hold is settled, the same key places the hold in a new run.
    expect((await settle(first.body.id, 'cancel')).status).toBe(200);
    const retried = await hold(walletId, 100, key);
    expect(retried).toMatchObject({ status: 200, body: { type: 'hold', status: 'held', amount: 100 } });
    const placedRun = await server.client.workflow.getHandle(workflowId).describe();
    expect(placedRun.runId).not.toBe(refusedRun);
    expect(placedRun.status.name).toBe('RUNNING');
    // And a retry of the placed hold is answered by that run, not by a third one.
    expect(await hold(walletId, 100, key)).toMatchObject({ status: 200, body: retried.body });
    expect((await server.client.workflow.getHandle(workflowId).describe()).runId).toBe(placedRun.runId);
    expect((await settle(retried.body.id, 'cancel')).status).toBe(200);
  });

  it('refuses the second of a concurrent confirm and cancel in its Update, and the workflow still completes', async () => {
    const walletId = await wallet(1000);
    const key = newId();
    const placed = await hold(walletId, 300, key);
    expect(placed.status).toBe(200);

    const answers = await Promise.all([settle(placed.body.id, 'confirm'), settle(placed.body.id, 'cancel')]);

    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400]);
    const loser = answers.find((answer) => answer.status === 400)!;
    expect(loser.body.type).toBe(gateway.problemType('hold-settled'));
    const winner = answers.find((answer) => answer.status === 200)!;
    const handle = server.client.workflow.getHandle(`money.hold:${account.tenant.id}:${key}`);
    expect(await handle.result()).toEqual({
      ok: true, holdTransactionId: placed.body.id, outcome: winner.body.type === 'confirm' ? 'confirmed' : 'canceled',
    });
    expect((await handle.describe()).status.name).toBe('COMPLETED');
  });
});
