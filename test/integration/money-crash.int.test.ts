import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { z } from 'zod';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { repoRoot } from '../../common/paths';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { startTestGateway, type TestGateway } from '../helpers/app';
import { appUrl, migrateSharedDatabase } from '../helpers/db';
import { call, waitFor, type JsonResponse } from '../helpers/http';
import { bearer, registerAccount, type RegisteredAccount } from '../helpers/identity';
import { closeLedgerPool, expectLedgerConsistent } from '../helpers/ledger';
import { verifyEmail } from '../helpers/money';
import { fundedWallet, walletOf } from '../helpers/money-flows';
import { startMoneyWorkerProcess, type WorkerProcess } from '../helpers/money-worker';
import { connectDevServer, uniqueTaskQueue, type DevServer } from '../helpers/temporal';

/**
 * Issue 6's crash test: the money Worker runs as a child process (test/helpers/money-worker-entry.ts)
 * on a task queue of its own on the dev server; transfers and holds go through the real gateway; the
 * Worker is SIGKILLed while they are in flight and started again, and every request is retried with
 * its Idempotency-Key until it has an answer, as a client would. Every operation then happened
 * exactly once: one answer per key, the rows and postings exactly-once implies, the expected
 * balances, the ledger invariant and `ledger:verify`. A hold's TTL timer that comes due while no
 * Worker runs fires once after the restart.
 */
jest.setTimeout(240_000);

/**
 * How long one client attempt waits for its answer before giving up and retrying, as a client would.
 * Shorter than the Worker's restart, so every operation not answered before the kill is retried.
 */
const ATTEMPT_MS = 3_000;
/** How long every operation together may take to get its answer once the Worker is back. */
const RECOVERY_MS = 120_000;
const FUNDS = 100_000;

const taskQueue = uniqueTaskQueue('money-crash');
let gateway: TestGateway;
let server: DevServer;
let app: DatabasePool;
let owner: DatabasePool;
let worker: WorkerProcess;
let account: RegisteredAccount;

beforeAll(async () => {
  await migrateSharedDatabase();
  [gateway, server, app, owner, worker] = await Promise.all([
    // Abandoned attempts keep their admission slot while they wait for the Worker, and their retries
    // take new ones: the tenant's in-flight bound (test/api/money/overload.test.ts) is out of the way.
    startTestGateway({ env: { MONEY_TASK_QUEUE: taskQueue, GRPC_CALL_TIMEOUT_MS: '30000', MONEY_MAX_IN_FLIGHT_PER_TENANT: '100000' }, waitUntilReady: true }),
    connectDevServer(),
    createDbPool(appUrl(), { maxPoolSize: 4, name: 'money-crash-test' }),
    createDbPool(config().db.ownerUrl, { maxPoolSize: 2, name: 'money-crash-owner' }),
    startMoneyWorkerProcess(taskQueue),
  ]);
  account = await registerAccount(gateway);
  await verifyEmail(owner, account.user.id);
});

afterAll(async () => {
  await worker?.stop('SIGTERM');
  await gateway?.close();
  await server?.close();
  await app?.end();
  await owner?.end();
  await closeLedgerPool();
});

interface Operation {
  kind: 'transfer' | 'hold' | 'cancel';
  key: string;
  path: string;
  body: Record<string, unknown>;
  /** Every answer the gateway gave this key, in order (failed attempts count as no answer). */
  answers: JsonResponse[];
  attempts: number;
}

const transferOf = (from: string, to: string, amount: number): Operation => ({
  kind: 'transfer', key: newId(), path: '/transfers', body: { fromWalletId: from, toWalletId: to, amount, currency: 'USD', reason: 'crash test' }, answers: [], attempts: 0,
});
const holdOf = (walletId: string, amount: number, ttl = '1h'): Operation => ({
  kind: 'hold', key: newId(), path: `/wallets/${walletId}/hold`, body: { amount, currency: 'USD', ttl, reason: 'crash test' }, answers: [], attempts: 0,
});
const cancelOf = (holdId: string): Operation => ({ kind: 'cancel', key: newId(), path: `/holds/${holdId}/cancel`, body: {}, answers: [], attempts: 0 });

/** One client attempt: the answer, or undefined when none came within ATTEMPT_MS. */
async function attempt(op: Operation): Promise<JsonResponse | undefined> {
  op.attempts += 1;
  try {
    const response = await call(`${gateway.baseUrl}/v1${op.path}`, {
      method: 'POST',
      headers: { ...bearer(account.accessToken), 'content-type': 'application/json', 'idempotency-key': op.key },
      body: JSON.stringify(op.body),
      signal: AbortSignal.timeout(ATTEMPT_MS),
    });
    op.answers.push(response);
    return response;
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') return undefined;
    throw error;
  }
}

/** Retries with the same key until the operation succeeds; a 5xx or no answer is retried, anything else fails the test. */
async function untilAnswered(op: Operation, deadline: number): Promise<JsonResponse> {
  for (;;) {
    const response = op.answers.at(-1)?.status === 200 ? op.answers.at(-1) : await attempt(op);
    if (response?.status === 200) return response;
    if (response && response.status < 500) throw new Error(`${op.kind} ${op.key} answered ${response.status}: ${JSON.stringify(response.body)}`);
    if (Date.now() > deadline) throw new Error(`${op.kind} ${op.key} still has no answer`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** SIGKILL as soon as `ready` says the work is under way, so the crash lands in the middle of it. */
async function killWhen(ready: () => Promise<boolean>): Promise<void> {
  await waitFor('the operations to be under way', ready, 60_000, 10);
  expect(await worker.stop('SIGKILL')).toBe('SIGKILL');
}

const countOf = async (query: ReturnType<typeof sql.unsafe>) => Number((await owner.oneFirst(query)));

describe('SIGKILL of the money worker', () => {
  it('completes every transfer and hold in flight exactly once after the restart, with the ledger intact', async () => {
    const tenantId = account.tenant.id;
    const wallets = await Promise.all(Array.from({ length: 4 }, () => fundedWallet(app, tenantId, account.user.id, FUNDS)));
    // Transfers both ways around a ring of four wallets (so they contend for the same locks), and holds on each.
    const inFlight: Operation[] = [];
    for (let i = 0; i < 24; i += 1) {
      const [a, b] = [wallets[i % 4], wallets[(i + 1) % 4]];
      inFlight.push(i % 2 === 0 ? transferOf(a, b, 10 + i) : transferOf(b, a, 10 + i));
    }
    for (let i = 0; i < 16; i += 1) inFlight.push(holdOf(wallets[i % 4], 100 + i));
    // Requests that arrive while no Worker runs: their workflows start and wait for one.
    const whileDown: Operation[] = [
      ...Array.from({ length: 6 }, (_, i) => transferOf(wallets[(i + 2) % 4], wallets[(i + 3) % 4], 500 + i)),
      ...Array.from({ length: 6 }, (_, i) => holdOf(wallets[i % 4], 700 + i)),
    ];
    const operations = [...inFlight, ...whileDown];
    const keys = operations.map((op) => op.key);

    const firstAttempts = inFlight.map((op) => attempt(op));
    await killWhen(async () => await countOf(sql.unsafe`
      SELECT count(*) FROM money_transactions WHERE tenant_id = ${tenantId} AND idempotency_key = ANY(${sql.array(keys, 'text')})
    `) > 0);
    const answeredBeforeKill = inFlight.filter((op) => op.answers.some((answer) => answer.status === 200)).length;
    const committedBeforeKill = await countOf(sql.unsafe`
      SELECT count(*) FROM money_transactions WHERE tenant_id = ${tenantId} AND idempotency_key = ANY(${sql.array(keys, 'text')})
    `);
    // Every attempt not answered before the kill times out while no Worker runs, and is retried after the restart.
    await Promise.all([...firstAttempts, ...whileDown.map((op) => attempt(op))]);
    worker = await startMoneyWorkerProcess(taskQueue);
    const deadline = Date.now() + RECOVERY_MS;
    const answers = await Promise.all(operations.map((op) => untilAnswered(op, deadline)));

    // The crash hit work in flight: not everything had been committed, let alone answered.
    expect(committedBeforeKill).toBeLessThan(inFlight.length);
    expect(answeredBeforeKill).toBeLessThan(inFlight.length);
    // Nothing answers while no Worker runs: every request sent then was retried after the restart.
    for (const op of whileDown) expect(op.attempts).toBeGreaterThan(1);

    // One answer per key: every 200 of a key is the same, and one more retry replays it again.
    for (const [i, op] of operations.entries()) {
      for (const answer of op.answers.filter((a) => a.status === 200)) expect(answer.body).toEqual(answers[i].body);
      const again = await attempt(op);
      expect(again).toMatchObject({ status: 200, body: answers[i].body });
      expect(answers[i].body).toMatchObject({ type: op.kind, status: op.kind === 'hold' ? 'held' : 'completed', amount: op.body.amount, idempotencyKey: op.key });
    }

    // The rows exactly-once implies: one transaction row per key (a transfer's incoming row has none),
    // and nothing else: 4 fundings, 2 rows per transfer, 1 per hold, 2 postings per operation.
    const transfers = operations.filter((op) => op.kind === 'transfer');
    const holds = operations.filter((op) => op.kind === 'hold');
    const perKey = await owner.any(sql.type(z.object({ key: z.string(), rows: z.coerce.number() }))`
      SELECT idempotency_key AS key, count(*) AS rows FROM money_transactions WHERE tenant_id = ${tenantId} AND idempotency_key IS NOT NULL
      GROUP BY idempotency_key
    `);
    expect(new Map(perKey.map((row) => [row.key, row.rows]))).toEqual(new Map(keys.map((key) => [key, 1])));
    expect(await countOf(sql.unsafe`SELECT count(*) FROM money_transactions WHERE tenant_id = ${tenantId}`))
      .toBe(4 + 2 * transfers.length + holds.length);
    expect(await countOf(sql.unsafe`SELECT count(*) FROM ledger_postings WHERE tenant_id = ${tenantId}`))
      .toBe(2 * (4 + transfers.length + holds.length));
    expect(await countOf(sql.unsafe`
      SELECT count(*) FROM idempotency_keys WHERE tenant_id = ${tenantId} AND key = ANY(${sql.array(keys, 'text')})
    `)).toBe(operations.length);
    expect(await countOf(sql.unsafe`SELECT count(*) FROM outbox_events WHERE tenant_id = ${tenantId} AND type = 'money.wallet.transfer'`))
      .toBe(transfers.length);

    // Each key started one workflow run, and each transfer's run has finished.
    await waitFor('every workflow to be visible', async () => (await workflowRuns()).length >= operations.length, 30_000);
    const runs = await workflowRuns();
    expect(runs.map((run) => run.workflowId).sort()).toEqual(operations.map((op) => `money.${op.kind}:${tenantId}:${op.key}`).sort());
    for (const op of transfers) await server.client.workflow.getHandle(`money.transfer:${tenantId}:${op.key}`).result();

    // The balances the operations add up to.
    for (const walletId of wallets) {
      const moved = (op: Operation, side: 'fromWalletId' | 'toWalletId') => (op.body[side] === walletId ? Number(op.body.amount) : 0);
      const held = holds.filter((op) => op.path === `/wallets/${walletId}/hold`).reduce((sum, op) => sum + Number(op.body.amount), 0);
      const net = transfers.reduce((sum, op) => sum - moved(op, 'fromWalletId') + moved(op, 'toWalletId'), 0);
      expect(await walletOf(app, tenantId, walletId)).toMatchObject({ available: FUNDS + net - held, frozen: held, pending: 0 });
    }
    await expectLedgerConsistent(tenantId);
    expect(ledgerVerify(tenantId)).toMatchObject({ status: 0, out: expect.stringContaining('OK: the ledger balances') });

    // The restarted Worker still serves the holds' workflows: each cancels, and the funds return.
    for (const op of holds) {
      const canceled = await untilAnswered(cancelOf(String(answers[operations.indexOf(op)].body.id)), Date.now() + 30_000);
      expect(canceled.body).toMatchObject({ type: 'cancel', amount: op.body.amount });
    }
    for (const walletId of wallets) expect(await walletOf(app, tenantId, walletId)).toMatchObject({ frozen: 0 });
    await expectLedgerConsistent(tenantId);
  });

  it('fires the timer of a hold that came due while no worker ran once, after the restart', async () => {
    const tenantId = account.tenant.id;
    const walletId = await fundedWallet(app, tenantId, account.user.id, 1000);
    // Long enough that the live Worker cannot expire the hold before the kill, however slow the answer.
    const op = holdOf(walletId, 400, '30s');
    const placed = await untilAnswered(op, Date.now() + 60_000);
    const holdId = String(placed.body.id);

    await killWhen(async () => true);
    const statusOf = () => owner.oneFirst(sql.type(z.object({ status: z.string() }))`SELECT status FROM money_transactions WHERE id = ${holdId}`);
    expect(await statusOf()).toBe('held');
    // The hold comes due while nothing runs its workflow: it stays held (nothing else expires it here).
    const due = Date.parse(String(placed.body.expiresAt));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now()) + 1000));
    expect(await walletOf(app, tenantId, walletId)).toMatchObject({ available: 600, frozen: 400 });
    expect(await statusOf()).toBe('held');

    worker = await startMoneyWorkerProcess(taskQueue);
    const result = await server.client.workflow.getHandle(`money.hold:${tenantId}:${op.key}`).result();
    expect(result).toEqual({ ok: true, holdTransactionId: holdId, outcome: 'expired' });

    expect(await walletOf(app, tenantId, walletId)).toMatchObject({ available: 1000, frozen: 0 });
    const releases = await owner.any(sql.type(z.object({ type: z.string(), expired: z.boolean().nullable() }))`
      SELECT type, (meta->>'expired')::boolean AS expired FROM money_transactions WHERE reference_transaction_id = ${holdId}
    `);
    expect(releases).toEqual([{ type: 'cancel', expired: true }]);
    const hold = await owner.one(sql.type(z.object({ status: z.string(), expiredAt: z.string().nullable() }))`
      SELECT status, expired_at::text AS "expiredAt" FROM money_transactions WHERE id = ${holdId}
    `);
    expect(hold.status).toBe('canceled');
    expect(hold.expiredAt).not.toBeNull();
    expect(await countOf(sql.unsafe`
      SELECT count(*) FROM outbox_events WHERE tenant_id = ${tenantId} AND partition_key = ${walletId} AND type = 'money.hold.expired'
    `)).toBe(1);
    await expectLedgerConsistent(tenantId);
    expect(ledgerVerify(tenantId).status).toBe(0);
  });
});

/** Every workflow run the gateway started on this file's task queue. */
async function workflowRuns() {
  const runs = [];
  for await (const run of server.client.workflow.list({ query: `TaskQueue = '${taskQueue}'` })) runs.push(run);
  return runs;
}

/** `npm run ledger:verify -- --tenant <id>` from source, on this test's database. */
function ledgerVerify(tenantId: string) {
  const result = spawnSync(process.execPath, [
    '-r', join(repoRoot, 'test/helpers/app-swc-register.cjs'), join(repoRoot, 'workers/ledger-verify.ts'), '--tenant', tenantId,
  ], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  return { status: result.status, out: result.stdout + result.stderr };
}
