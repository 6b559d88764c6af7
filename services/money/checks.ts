import { problems } from '../../common/problems';
import type { MoneyActor } from './movements';
import { activityContext } from '../../common/temporal/activity-context';
import type { DatabaseTransactionConnection } from '../../db/pool';
import { isEmailVerified, type WalletRow } from '../../db/queries/money/wallets.queries';

/**
 * Activities connect as the owner role, which row-level security does not filter, so a wallet
 * found by id is checked against the workflow's tenant here: another tenant's wallet is as absent as
 * an unknown one (404), exactly as the gateway's own reads see it.
 */
export function walletOfTenant(wallet: WalletRow | undefined, tenantId: string): WalletRow {
  if (!wallet || wallet.tenantId !== tenantId) throw problems.notFound('wallet');
  return wallet;
}

export function checkFunds(wallet: WalletRow, amount: number): void {
  if (wallet.available < amount) throw problems.insufficientFunds(wallet.available, amount);
}

/**
 * Who an operation runs for: the workflow's tenant, and the actor and trace of the request that the
 * workflow carried to this activity (common/temporal/activity-context.ts). `system`: nobody asked
 * (a hold's timer, the sweep), so no actor is named.
 */
export function actorOf(tenantId: string, system = false): MoneyActor {
  const context = activityContext();
  return { tenantId, actorId: system ? null : context.actorId ?? null, traceId: context.traceId };
}

/** Moving money needs a verified e-mail (document 1, security flows rule 2), checked in the operation's transaction. */
export async function requireVerifiedActor(tx: DatabaseTransactionConnection, actor: MoneyActor): Promise<void> {
  if (actor.actorId && !await isEmailVerified(tx, actor.actorId)) throw problems.emailNotVerified();
}
