import { WorkflowNotFoundError } from '@temporalio/client';
import { newId } from '../../../common/ids';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { call, waitFor, type JsonResponse } from '../../helpers/http';
import { bearer, post, registerAccount } from '../../helpers/identity';
import { expectLedgerConsistent } from '../../helpers/ledger';
import { fundedWallet, startMoneyFlowsFixture, walletOf, type MoneyFlowsFixture } from '../../helpers/money-flows';

/**
 * The counts that bound a tenant are kept in Redis, so they hold for the gateway tier, not per
 * replica: the rate limit (docs/decisions/access.md, Rate limits) and the money admission
 * (docs/decisions/money.md, Overload: MONEY_MAX_IN_FLIGHT_PER_TENANT). Requests spread over two
 * gateways are refused once the shared count reaches the bound, never at twice the bound. (The
 * circuit breakers are per gateway by design and are not tested here.)
 */
jest.setTimeout(120_000);

const LIMIT = 10;
const IN_FLIGHT = 2;

let registrar: TestGateway;
let limited: TestGateway[];
let money: MoneyFlowsFixture;
/** The money fixture's gateway is A; this is B, on the same money task queue and bound. */
let moneyB: TestGateway;

beforeAll(async () => {
  const low = { RATE_LIMIT_PER_MINUTE: String(LIMIT), RATE_LIMIT_ADMIN_PER_MINUTE: String(LIMIT) };
  money = await startMoneyFlowsFixture('replicas-admission', { MONEY_MAX_IN_FLIGHT_PER_TENANT: String(IN_FLIGHT) });
  [registrar, moneyB, ...limited] = await Promise.all([
    // Accounts are registered with the test defaults (registration is counted per address).
    startTestGateway(),
    startTestGateway({ env: { MONEY_TASK_QUEUE: money.taskQueue, MONEY_MAX_IN_FLIGHT_PER_TENANT: String(IN_FLIGHT) }, waitUntilReady: true }),
    startTestGateway({ env: low }), startTestGateway({ env: low }),
  ]);
});

afterAll(async () => {
  await Promise.all([registrar?.close(), moneyB?.close(), ...(limited ?? []).map((gateway) => gateway.close())]);
  await money?.close();
});

const me = (gateway: TestGateway, token: string) => call(`${gateway.baseUrl}/v1/auth/me`, { headers: bearer(token) });
/** Request i goes to gateway A when i is even, to B when odd. */
const alternate = (i: number) => limited[i % 2];

describe('the rate limit, counted across gateways', () => {
  it('refuses requests alternating over two gateways with 429 once the shared count reaches the limit', async () => {
    const { accessToken } = await registerAccount(registrar);
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 4; i += 1) statuses.push((await me(alternate(i), accessToken)).status);
    expect(statuses).toEqual([...Array(LIMIT).fill(200), 429, 429, 429, 429]);
  });

  it('admits exactly the limit of a concurrent burst spread over both gateways, never twice the limit', async () => {
    const { accessToken } = await registerAccount(registrar);
    const answers = await Promise.all(Array.from({ length: 3 * LIMIT }, (_, i) => me(alternate(i), accessToken)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(LIMIT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(2 * LIMIT);
    // Each gateway refused its share: neither counted on its own.
    for (const parity of [0, 1]) expect(statuses.filter((status, i) => i % 2 === parity && status === 429).length).toBeGreaterThan(0);
  });
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read answers member by member
type Body = Record<string, any>;

async function workflowExists(workflowId: string): Promise<boolean> {
  try {
    await money.server.client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

describe('the money admission, counted across gateways', () => {
  it('refuses a tenant\'s transfer on either gateway with 429 once its operations in flight on both reach the bound, and admits again when they settle', async () => {
    const { account } = money;
    const gateways = [money.gateway, moneyB];
    const [from, to] = [await fundedWallet(money.app, account.tenant.id, account.user.id, 1000), await fundedWallet(money.app, account.tenant.id, account.user.id, 0)];
    const transfer = (gateway: TestGateway, key: string): Promise<JsonResponse<Body>> => post<Body>(gateway, '/transfers',
      { fromWalletId: from, toWalletId: to, amount: 100, currency: 'USD', reason: 'replicas' }, { ...bearer(account.accessToken), 'idempotency-key': key });

    // Without a worker the workflows wait in Temporal: their requests stay in flight, one on each gateway.
    await money.stopWorker();
    const [k1, k2, k3, k4] = [newId(), newId(), newId(), newId()];
    const inFlight = [transfer(gateways[0], k1), transfer(gateways[1], k2)];
    await waitFor('both transfers to be started', async () =>
      await workflowExists(`money.transfer:${account.tenant.id}:${k1}`) && await workflowExists(`money.transfer:${account.tenant.id}:${k2}`));

    // Each gateway holds one slot: counted alone, each would admit one more.
    for (const [gateway, key] of [[gateways[0], k3], [gateways[1], k4]] as const) {
      const refused = await transfer(gateway, key);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ type: gateway.problemType('rate-limit-exceeded'), max: IN_FLIGHT, retryAfter: 1 });
      expect(await workflowExists(`money.transfer:${account.tenant.id}:${key}`)).toBe(false);
    }

    await money.startWorker();
    // Answered at once or, past the deadline, 202 with the job: either way each moves the money once.
    for (const answer of await Promise.all(inFlight)) expect([200, 202]).toContain(answer.status);
    // Settled on both gateways, the slots are free: the refused key is admitted, through the other gateway.
    let retried: JsonResponse<Body> | undefined;
    await waitFor('the refused transfer to be admitted', async () => {
      retried = await transfer(gateways[1], k3);
      return retried.status !== 429;
    }, 30_000, 250);
    expect(retried).toMatchObject({ status: 200, body: { type: 'transfer', status: 'completed', amount: 100, idempotencyKey: k3 } });
    await waitFor('the first two transfers to complete', async () =>
      (await walletOf(money.app, account.tenant.id, from)).available === 700, 30_000, 100);
    expect((await walletOf(money.app, account.tenant.id, to)).available).toBe(300);
    await expectLedgerConsistent(account.tenant.id);
  });
});
