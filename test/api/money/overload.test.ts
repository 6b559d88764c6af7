import { WorkflowNotFoundError } from '@temporalio/client';
import { newId } from '../../../common/ids';
import { z } from 'zod';
import { sql } from '../../../db/pool';
import { get, post, bearer, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { call, waitFor, type JsonResponse } from '../../helpers/http';
import { expectLedgerConsistent } from '../../helpers/ledger';
import { verifyEmail } from '../../helpers/money';
import { fundedWallet, startMoneyFlowsFixture, type MoneyFlowsFixture } from '../../helpers/money-flows';

/**
 * Overload of workflow-backed money requests (issue 19), made deterministic by stopping the money
 * worker: workflows then wait in Temporal, so requests stay in flight as long as the test wants.
 * A tenant past its in-flight bound (2 here) is refused at once with 429 and Retry-After and
 * nothing is started for it, while another tenant is admitted; a request whose deadline (the
 * default 5 s) passes while its workflow waits answers 202 with its job, which GET /v1/jobs/{jobId}
 * follows to the final transaction (or the refusal) that the same Idempotency-Key then replays.
 */
jest.setTimeout(120_000);

let fixture: MoneyFlowsFixture;
let account: RegisteredAccount;

beforeAll(async () => {
  fixture = await startMoneyFlowsFixture('money-overload', { MONEY_MAX_IN_FLIGHT_PER_TENANT: '2' });
  ({ account } = fixture);
});

afterAll(() => fixture?.close());

afterEach(async () => {
  // A failed test must not leave the next one without a worker.
  await fixture.stopWorker();
  await fixture.startWorker();
  await expectLedgerConsistent();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read answers member by member
type Body = Record<string, any>;

const send = (as: RegisteredAccount, path: string, body: Record<string, unknown>, key: string): Promise<JsonResponse<Body>> =>
  post<Body>(fixture.gateway, path, body, { ...bearer(as.accessToken), 'idempotency-key': key });
const transfer = (fromWalletId: string, toWalletId: string, amount: number) => ({ fromWalletId, toWalletId, amount, currency: 'USD', reason: 'overload' });
const wallet = (as: RegisteredAccount, amount: number) => fundedWallet(fixture.app, as.tenant.id, as.user.id, amount);
const job = (as: RegisteredAccount, jobId: string) => get<Body>(fixture.gateway, `/jobs/${jobId}`, as.accessToken);

/** Polls the job until it is no longer running, and answers it. */
async function finished(as: RegisteredAccount, jobId: string): Promise<Body> {
  let last: JsonResponse<Body> | undefined;
  await waitFor(`job ${jobId} to finish`, async () => {
    last = await job(as, jobId);
    return last.status === 200 && last.body.status !== 'running';
  });
  return last!.body;
}

function expectJobAccepted(response: JsonResponse<Body>, jobId: string): void {
  expect({ status: response.status, body: response.body }).toEqual({ status: 202, body: { jobId } });
  expect(response.headers.get('location')).toBe(`/v1/jobs/${jobId}`);
}

async function workflowExists(workflowId: string): Promise<boolean> {
  try {
    await fixture.server.client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

async function transactionsUnder(tenantId: string, key: string): Promise<number> {
  return fixture.owner.oneFirst(sql.type(z.object({ count: z.number() }))`SELECT count(*)::int AS count FROM money_transactions WHERE tenant_id = ${tenantId} AND idempotency_key = ${key}`);
}

describe('admission and the deadline of transfers', () => {
  it('refuses a tenant past its bound at once with 429 and Retry-After, answers 202 with the job at the deadline, and replays the result', async () => {
    const other = await registerAccount(fixture.gateway);
    await verifyEmail(fixture.owner, other.user.id);
    const [from, to, otherFrom, otherTo] = [await wallet(account, 1000), await wallet(account, 0), await wallet(other, 50), await wallet(other, 0)];
    await fixture.stopWorker();

    const [k1, k2, k3, k4] = [newId(), newId(), newId(), newId()];
    const tenant = account.tenant.id;
    const first = send(account, '/transfers', transfer(from, to, 300), k1);
    // More than the wallet holds: accepted as a job all the same, which then fails with the refusal.
    const second = send(account, '/wallets/transfer', transfer(from, to, 5000), k2);
    await waitFor('both workflows to be started', async () =>
      await workflowExists(`money.transfer:${tenant}:${k1}`) && await workflowExists(`money.transfer:${tenant}:${k2}`));

    const refused = await send(account, '/transfers', transfer(from, to, 100), k3);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toMatchObject({ type: fixture.gateway.problemType('rate-limit-exceeded'), retryAfter: 1, max: 2 });
    expect(await workflowExists(`money.transfer:${tenant}:${k3}`)).toBe(false);
    // Counted beside the rate limit's refusals, so an operator sees tenants queueing at their bound.
    expect((await call<string>(`${fixture.gateway.baseUrl}/metrics`)).body).toMatch(/rate_limit_rejections_total\{group="money-in-flight"\} [1-9]/);
    // The bound is the tenant's own: another tenant is admitted meanwhile.
    const third = send(other, '/transfers', transfer(otherFrom, otherTo, 20), k4);

    const [movedLate, refusedLate, otherLate] = await Promise.all([first, second, third]);
    expectJobAccepted(movedLate, `money-transfer.${k1}`);
    expectJobAccepted(refusedLate, `money-transfer.${k2}`);
    expectJobAccepted(otherLate, `money-transfer.${k4}`);
    expect(await job(account, `money-transfer.${k1}`)).toMatchObject({ status: 200, body: { kind: 'money-transfer', status: 'running', completedAt: null } });
    // A job is read in the caller's tenant only.
    expect((await job(other, `money-transfer.${k1}`)).status).toBe(404);

    await fixture.startWorker();
    const done = await finished(account, `money-transfer.${k1}`);
    expect(done).toMatchObject({ status: 'completed', result: { type: 'transfer', status: 'completed', amount: 300, idempotencyKey: k1 } });
    expect(done.completedAt).toBe(done.result.createdAt);
    expect(await send(account, '/transfers', transfer(from, to, 300), k1)).toMatchObject({ status: 200, body: done.result });
    expect(await finished(account, `money-transfer.${k2}`)).toMatchObject({
      status: 'failed', error: { type: fixture.gateway.problemType('insufficient-funds'), status: 400, instance: `/v1/jobs/money-transfer.${k2}` },
    });
    expect(await finished(other, `money-transfer.${k4}`)).toMatchObject({ status: 'completed', result: { amount: 20 } });

    // The refused key started nothing; retried once the slots are free (as Retry-After says), it is served.
    let retried: JsonResponse<Body> | undefined;
    await waitFor('a slot for the refused key', async () => {
      retried = await send(account, '/transfers', transfer(from, to, 100), k3);
      return retried.status !== 429;
    }, 30_000, 1_000);
    expect(retried).toMatchObject({ status: 200, body: { amount: 100, idempotencyKey: k3 } });
    for (const key of [k1, k3]) expect(await transactionsUnder(tenant, key)).toBe(1);
    expect(await transactionsUnder(tenant, k2)).toBe(0);
  });
});

describe('the deadline of holds and their settlements', () => {
  it('answers a hold and its confirm with their jobs, which end with the transactions the keys replay', async () => {
    const walletId = await wallet(account, 500);
    const [holdKey, confirmKey] = [newId(), newId()];
    const hold = { amount: 200, currency: 'USD', ttl: '1h', reason: 'overload' };
    await fixture.stopWorker();
    expectJobAccepted(await send(account, `/wallets/${walletId}/hold`, hold, holdKey), `money-hold.${holdKey}`);
    await fixture.startWorker();
    const placed = await finished(account, `money-hold.${holdKey}`);
    expect(placed).toMatchObject({ kind: 'money-hold', status: 'completed', result: { type: 'hold', status: 'held', amount: 200 } });
    expect(await send(account, `/wallets/${walletId}/hold`, hold, holdKey)).toMatchObject({ status: 200, body: placed.result });

    // A confirm is an update of the hold's workflow: its job names both keys.
    await fixture.stopWorker();
    const confirmJob = `money-confirm.${holdKey}_${confirmKey}`;
    expectJobAccepted(await send(account, `/holds/${placed.result.id}/confirm`, {}, confirmKey), confirmJob);
    expect(await job(account, confirmJob)).toMatchObject({ status: 200, body: { status: 'running' } });
    await fixture.startWorker();
    const confirmed = await finished(account, confirmJob);
    expect(confirmed).toMatchObject({ status: 'completed', result: { type: 'confirm', amount: 200, referenceTransactionId: placed.result.id } });
    expect(await send(account, `/holds/${placed.result.id}/confirm`, {}, confirmKey)).toMatchObject({ status: 200, body: confirmed.result });

    // A cancel after the confirm is refused; read as a job (here after the fact) it is failed with hold-settled.
    const cancelKey = newId();
    expect((await send(account, `/holds/${placed.result.id}/cancel`, {}, cancelKey)).status).toBe(400);
    expect(await finished(account, `money-cancel.${holdKey}_${cancelKey}`)).toMatchObject({
      status: 'failed', error: { type: fixture.gateway.problemType('hold-settled'), holdStatus: 'confirmed' },
    });
  });
});
