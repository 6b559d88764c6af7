import type { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { config } from '../../common/config';
import { enqueueEvents } from '../../services/events/publish';
import { newWalletId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { creditWallet } from '../../services/money/wallet-operations';
import { createObjectStore } from '../../common/object-store';
import { createSmtpSender } from '../../services/notify/smtp';
import { createDbPool, type DatabasePool } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { insertWallet, selectWallet, type WalletRow } from '../../db/queries/money/wallets.queries';
import { startTestGateway, type TestGateway } from './app';
import { appUrl, migrateSharedDatabase } from './db';
import { registerAccount, type RegisteredAccount } from './identity';
import { closeLedgerPool } from './ledger';
import { verifyEmail } from './money';
import { connectDevServer, createTestWorker, terminateRunningOn, uniqueTaskQueue, type DevServer, type WorkerTarget } from './temporal';

/**
 * Wallets and money for the hold and transfer tests, made with the money building blocks
 * (services/money/wallet-operations.ts) straight in PostgreSQL. The ledger invariant after each scenario is
 * test/helpers/ledger.ts (expectLedgerConsistent).
 */

const NO_LIMITS = { planId: 'test', maxTxAmount: 0, maxBalance: 0 };

/** A wallet of the user in the tenant, credited with `amount` (when above 0). */
export async function fundedWallet(app: DatabasePool, tenantId: string, userId: string, amount: number, currency = 'USD'): Promise<string> {
  const id = newWalletId();
  await withTenant(app, tenantId, async (tx) => {
    await insertWallet(tx, { id, tenantId, userId, currency, label: id });
    if (amount > 0) {
      // Funded by the platform itself (actorId null): the owner's e-mail may still be unverified.
      const funding = await creditWallet(tx, { tenantId, actorId: null }, { walletId: id, amount, currency, reason: 'test funding', meta: {}, idempotencyKey: null }, NO_LIMITS);
      await enqueueEvents(tx, funding.events);
    }
  });
  return id;
}

export function walletOf(app: DatabasePool, tenantId: string, id: string): Promise<WalletRow> {
  return withTenant(app, tenantId, async (tx) => (await selectWallet(tx, tenantId, id))!);
}

/**
 * A worker of the money task queue as workers/main.ts builds it: the money activities on the
 * application role's pool, the hold sweep's cross-tenant query on the owner's.
 */
export function moneyWorker(target: WorkerTarget, taskQueue: string, appPool: DatabasePool, fleetPool: DatabasePool): Promise<Worker> {
  const cfg = config();
  const { money } = createActivities({
    appPool, fleetPool, logger: createLogger('money-test', 'silent'), objectStore: createObjectStore(cfg.s3), smtp: createSmtpSender(cfg.mail),
  });
  return createTestWorker(target, { taskQueue, activities: money });
}

export interface MoneyFlowsFixture {
  gateway: TestGateway;
  server: DevServer;
  /** The application role's pool (row-level security) and the owner's. */
  app: DatabasePool;
  owner: DatabasePool;
  /** A registered account whose e-mail is verified (money mutations need it). */
  account: RegisteredAccount;
  /** The gateway's money task queue, served by the fixture's worker while it runs. */
  taskQueue: string;
  /** Stops the worker (workflows then wait in Temporal), and starts a new one on the same queue. */
  stopWorker(): Promise<void>;
  startWorker(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A gateway whose money workflows go to a worker of the test's own on the dev server (the platform's
 * worker may run older code), with a verified account: the setup of the hold and transfer tests.
 */
export async function startMoneyFlowsFixture(name: string, env: Record<string, string> = {}): Promise<MoneyFlowsFixture> {
  await migrateSharedDatabase();
  const taskQueue = uniqueTaskQueue(name);
  const [gateway, server, app, owner] = await Promise.all([
    startTestGateway({ env: { MONEY_TASK_QUEUE: taskQueue, ...env }, waitUntilReady: true }),
    connectDevServer(),
    createDbPool(appUrl(), { maxPoolSize: 4, name: `${name}-test` }),
    createDbPool(config().db.ownerUrl, { maxPoolSize: 2, name: `${name}-owner` }),
  ]);
  let worker: { instance: Worker; running: Promise<void> } | undefined;
  const startWorker = async () => {
    const instance = await moneyWorker(server, taskQueue, app, owner);
    worker = { instance, running: instance.run() };
  };
  const stopWorker = async () => {
    const stopping = worker;
    worker = undefined;
    stopping?.instance.shutdown();
    await stopping?.running;
  };
  await startWorker();
  const account = await registerAccount(gateway);
  await verifyEmail(owner, account.user.id);
  return {
    gateway, server, app, owner, account, taskQueue, startWorker, stopWorker,
    async close() {
      await stopWorker();
      await gateway.close();
      await terminateRunningOn(server.client, taskQueue);
      await server.close();
      await app.end();
      await owner.end();
      await closeLedgerPool();
    },
  };
}
