import type { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { config } from '../../common/config';
import { newWalletId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { creditWallet } from '../../common/money/operations';
import { createObjectStore } from '../../common/object-store';
import { createSmtpSender } from '../../common/notify/smtp';
import type { DatabasePool } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { insertWallet, selectWallet, type WalletRow } from '../../db/queries/money/wallets.queries';
import { createTestWorker, type WorkerTarget } from './temporal';

/**
 * Wallets and money for the hold and transfer tests, made with the money building blocks
 * (common/money/operations.ts) straight in PostgreSQL. The ledger invariant after each scenario is
 * test/helpers/ledger.ts (expectLedgerConsistent).
 */

const NO_LIMITS = { planId: 'test', maxTxAmount: 0, maxBalance: 0 };

/** A wallet of the user in the tenant, credited with `amount` (when above 0). */
export async function fundedWallet(app: DatabasePool, tenantId: string, userId: string, amount: number, currency = 'USD'): Promise<string> {
  const id = newWalletId();
  await withTenant(app, tenantId, async (tx) => {
    await insertWallet(tx, { id, tenantId, userId, currency, label: id });
    if (amount > 0) {
      await creditWallet(tx, { tenantId, actorId: userId }, { walletId: id, amount, currency, reason: 'test funding', meta: {}, idempotencyKey: null }, NO_LIMITS);
    }
  });
  return id;
}

export function walletOf(app: DatabasePool, tenantId: string, id: string): Promise<WalletRow> {
  return withTenant(app, tenantId, async (tx) => (await selectWallet(tx, id))!);
}

/** A worker of the money task queue as workers/main.ts builds it (the money activities on the owner pool). */
export function moneyWorker(target: WorkerTarget, taskQueue: string, ownerPool: DatabasePool): Promise<Worker> {
  const cfg = config();
  const { money } = createActivities({
    ownerPool, logger: createLogger('money-test', 'silent'), objectStore: createObjectStore(cfg.s3), smtp: createSmtpSender(cfg.mail),
  });
  return createTestWorker(target, { taskQueue, activities: money });
}
