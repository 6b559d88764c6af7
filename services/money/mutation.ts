import { currentRequestContext } from '../../common/context';
import { problems } from '../../common/problems';
import type { MoneyActor } from './movements';
import { runIdempotent, requestHash, type Answer, type Outcome } from '../idempotency/idempotent';
import type { DatabaseTransactionConnection } from '../../db/pool';
import { isVerifiedPerson } from './checks';
import type { AuthState } from '../../common/context';
import type { MoneyDeps } from './deps';

export function callerActor(auth: AuthState): MoneyActor {
  return { tenantId: auth.tenantId, actorId: auth.userId, traceId: currentRequestContext()?.traceId };
}

export interface MoneyMutation {
  /** The route, `POST /wallets/:id/credit`: keys are scoped per tenant and route. */
  scope: string;
  key: string;
  /** What makes two requests "the same": path parameters and body. */
  request: unknown;
  /** Moving money needs a verified e-mail (document 1, security flows rule 2); creating a wallet does not. */
  requireVerifiedEmail: boolean;
}

/**
 * Runs one money mutation at most once per Idempotency-Key, in one database transaction that also
 * stores the answer (db/idempotent.ts): the same key and body answer the same status and body, even
 * after a crash between commit and response; another body is 409 idempotency-conflict. A refusal
 * (a problem) stores nothing, so the client may fix the cause and retry with the same key.
 */
export function runMoneyMutation<T>(
  deps: MoneyDeps,
  auth: AuthState,
  mutation: MoneyMutation,
  operation: (tx: DatabaseTransactionConnection, actor: MoneyActor) => Promise<Outcome<T>>,
): Promise<Answer<T>> {
  const actor = callerActor(auth);
  const request = {
    tenantId: auth.tenantId, scope: mutation.scope, key: mutation.key,
    hash: requestHash(mutation.request), ttlHours: deps.config.maintenance.idempotencyKeyTtlHours,
  };
  return runIdempotent(deps.db, request, async (tx) => {
    if (mutation.requireVerifiedEmail) await requireVerifiedEmail(tx, auth.userId);
    return operation(tx, actor);
  });
}

/** 403 forbidden until the caller has verified its e-mail address. */
export async function requireVerifiedEmail(tx: DatabaseTransactionConnection, userId: string): Promise<void> {
  if (!await isVerifiedPerson(tx, userId)) {
    throw problems.emailNotVerified();
  }
}
