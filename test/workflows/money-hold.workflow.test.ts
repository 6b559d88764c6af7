import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { requestHash } from '../../services/idempotency/idempotent';
import { createDbPool, type DatabasePool } from '../../db/pool';
import { moneyHold } from '../../workflows/money/hold.workflow';
import type { HoldInput } from '../../workflows/money/money.messages';
import { startTestGateway, type TestGateway } from '../helpers/app';
import { appUrl, migrateSharedDatabase } from '../helpers/db';
import { registerAccount, type RegisteredAccount } from '../helpers/identity';
import { fundedWallet, moneyWorker, walletOf } from '../helpers/money-flows';
import { closeLedgerPool, expectLedgerConsistent } from '../helpers/ledger';
import { verifyEmail } from '../helpers/money';
import { createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';

/**
 * The hold workflow under the time-skipping server, with the real activities and PostgreSQL: a hold
 * of the longest TTL (168 h) is still held an hour before it and expires at it, returning the funds.
 * (Confirm and cancel arrive as Updates, tested against the dev server in test/api/money/holds.test.ts:
 * the Java test server drops update headers, docs/decisions/testing.md.)
 */
jest.setTimeout(90_000);

let env: TestWorkflowEnvironment;
let gateway: TestGateway;
let app: DatabasePool;
let owner: DatabasePool;
let account: RegisteredAccount;
let worker: Worker;
let running: Promise<void>;
const taskQueue = uniqueTaskQueue('money-hold-workflow');

beforeAll(async () => {
  await migrateSharedDatabase();
  [env, gateway, app, owner] = await Promise.all([
    createTimeSkippingEnv(),
    startTestGateway(),
    createDbPool(appUrl(), { maxPoolSize: 4, name: 'money-hold-workflow' }),
    createDbPool(config().db.ownerUrl, { maxPoolSize: 2, name: 'money-hold-workflow-owner' }),
  ]);
  account = await registerAccount(gateway);
  await verifyEmail(owner, account.user.id);
  worker = await moneyWorker(env, taskQueue, app, owner);
  running = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
  await gateway?.close();
  await app?.end();
  await owner?.end();
  await closeLedgerPool();
});

function holdInput(walletId: string, amount: number, ttlSeconds: number): HoldInput {
  const key = newId();
  return {
    tenantId: account.tenant.id, walletId, amount, currency: 'USD', reason: 'test', ttlSeconds,
    limits: { planId: 'test', maxTxAmount: 0, maxBalance: 0 }, maxOpenHolds: 100,
    idempotency: { scope: 'POST /wallets/:id/hold', key, requestHash: requestHash({ walletId, amount, key }), ttlHours: 24 },
  };
}

describe('moneyHold workflow', () => {
  it('keeps a 168 h hold frozen until its TTL, then expires it by its own timer and returns the funds', async () => {
    const walletId = await fundedWallet(app, account.tenant.id, account.user.id, 1000);
    const ttlSeconds = 168 * 3600;
    const handle = await env.client.workflow.start(moneyHold, {
      taskQueue, workflowId: `money.hold:${account.tenant.id}:${newId()}`, args: [holdInput(walletId, 600, ttlSeconds)],
    });
    await env.sleep('167 hours');
    expect(await walletOf(app, account.tenant.id, walletId)).toMatchObject({ available: 400, frozen: 600 });

    expect(await handle.result()).toMatchObject({ ok: true, outcome: 'expired' });
    expect(await walletOf(app, account.tenant.id, walletId)).toMatchObject({ available: 1000, frozen: 0 });

    // The timer is the hold's own TTL (exact to the second), not a polling interval.
    const history = await handle.fetchHistory();
    const timers = (history.events ?? []).filter((event) => event.timerStartedEventAttributes);
    const firstTimerSeconds = Number(timers[0]?.timerStartedEventAttributes?.startToFireTimeout?.seconds ?? 0);
    expect(Math.abs(firstTimerSeconds - ttlSeconds)).toBeLessThanOrEqual(5);
    await expectLedgerConsistent();
  });

  it('completes with the refusal of a hold the wallet cannot cover, writing nothing', async () => {
    const walletId = await fundedWallet(app, account.tenant.id, account.user.id, 100);
    const handle = await env.client.workflow.start(moneyHold, {
      taskQueue, workflowId: `money.hold:${account.tenant.id}:${newId()}`, args: [holdInput(walletId, 600, 60)],
    });
    expect(await handle.result()).toEqual({
      ok: false, problem: { type: 'insufficient-funds', detail: 'Available balance 100 is below 600', extensions: { available: 100, requested: 600 } },
    });
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    expect(await walletOf(app, account.tenant.id, walletId)).toMatchObject({ available: 100, frozen: 0 });
  });
});
