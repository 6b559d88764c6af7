import { problems } from '../../common/problems';
import { accountIdOf } from '../../common/context';
import type { MoneyActor } from './movements';
import type { DatabaseTransactionConnection } from '../../db/pool';
import { isEmailVerified, type WalletRow } from '../../db/queries/money/wallets.queries';

/**
 * A wallet the operation asked for, or 404. Another tenant's wallet never gets here (the lock query
 * names the workflow's tenant and row-level security checks it again on the application role), so
 * it is as absent as an unknown one; the tenant is compared once more for the wallet in hand.
 */
export function walletOfTenant(wallet: WalletRow | undefined, tenantId: string): WalletRow {
  if (!wallet || wallet.tenantId !== tenantId) throw problems.notFound('wallet');
  return wallet;
}

export function checkFunds(wallet: WalletRow, amount: number): void {
  if (wallet.available < amount) throw problems.insufficientFunds(wallet.available, amount);
}

/**
 * The person behind the request a workflow carried to its activity, and the request's trace: the
 * activity reads them from its propagated context (common/temporal/activity-context.ts, requestActor)
 * and hands them in, so the money services know nothing of Temporal.
 */
export interface WorkflowCaller {
  actorId: string | null;
  traceId: string | undefined;
}

/**
 * Who an operation runs for: the workflow's tenant, and the caller and trace of the request that the
 * workflow carried. `system`: nobody asked (a hold's timer, the sweep), so no actor is named.
 */
export function workflowActor(tenantId: string, caller: WorkflowCaller, system = false): MoneyActor {
  return { tenantId, actorId: system ? null : caller.actorId, traceId: caller.traceId };
}

/** Moving money needs a verified e-mail (docs/reference/money.md#rule-13), checked in the operation's transaction. */
export async function requireVerifiedActor(tx: DatabaseTransactionConnection, actor: MoneyActor): Promise<void> {
  if (actor.actorId && !await isVerifiedPerson(tx, actor.actorId)) throw problems.emailNotVerified();
}

/**
 * Whether an actor is an account with a verified e-mail address. An API key has none, so it cannot move
 * money (docs/decisions/identity.md, API keys).
 */
export async function isVerifiedPerson(tx: DatabaseTransactionConnection, actorId: string): Promise<boolean> {
  const account = accountIdOf(actorId);
  return account !== null && isEmailVerified(tx, account);
}
