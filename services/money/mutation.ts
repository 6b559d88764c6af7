import { currentRequestContext } from '../../common/context';
import { problems } from '../../common/problems';
import type { MoneyActor } from './movements';
import { outboxEventOf, type EventInput } from '../events/publish';
import { runIdempotent, requestHash, type Answer } from '../idempotency/idempotent';
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
  /** Moving money needs a verified e-mail (docs/reference/money.md#rule-13); creating a wallet does not. */
  requireVerifiedEmail: boolean;
}

/** A money operation's answer and the outbox events of its change (money events, audit records). */
export interface MoneyOutcome<T> extends Answer<T> {
  events?: readonly EventInput[];
}

/**
 * Runs one money mutation at most once per Idempotency-Key, in one database transaction that also
 * stores the answer (services/idempotency/idempotent.ts): the same key and body answer the same status and body, even
 * after a crash between commit and response; another body is 409 idempotency-conflict. A refusal
 * (a problem) stores nothing, so the client may fix the cause and retry with the same key.
 */
export function runMoneyMutation<T>(
  deps: MoneyDeps,
  auth: AuthState,
  mutation: MoneyMutation,
  operation: (tx: DatabaseTransactionConnection, actor: MoneyActor) => Promise<MoneyOutcome<T>>,
): Promise<Answer<T>> {
  const actor = callerActor(auth);
  const request = {
    tenantId: auth.tenantId, scope: mutation.scope, key: mutation.key,
    hash: requestHash(mutation.request), ttlHours: deps.config.maintenance.idempotencyKeyTtlHours,
  };
  return runIdempotent(deps.db, request, async (tx) => {
    if (mutation.requireVerifiedEmail) await requireVerifiedEmail(tx, auth.userId);
    const { events, ...answer } = await operation(tx, actor);
    return { ...answer, outbox: events?.map(outboxEventOf) };
  });
}

/** 403 forbidden until the caller has verified its e-mail address. */
export async function requireVerifiedEmail(tx: DatabaseTransactionConnection, userId: string): Promise<void> {
  if (!await isVerifiedPerson(tx, userId)) {
    throw problems.emailNotVerified();
  }
}
