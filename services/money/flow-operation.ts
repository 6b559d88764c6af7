import { outboxEventOf, type EventInput } from '../events/publish';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import type { IdempotencyUse, TransactionView } from '../../workflows/money/money.messages';
import { runIdempotent, type IdempotentRequest } from '../idempotency/idempotent';

/** A workflow's Idempotency-Key use (money.messages), as the idempotency store looks it up for its tenant. */
export function idempotentRequestOf(tenantId: string, use: IdempotencyUse): IdempotentRequest {
  return { tenantId, scope: use.scope, key: use.key, hash: use.requestHash, ttlHours: use.ttlHours };
}

/**
 * One operation of a money workflow (a hold, its settlement, a transfer) run at most once per
 * Idempotency-Key (runIdempotent): its answer is stored in its own transaction, so the local
 * activity run again after a worker crash answers what was committed instead of moving the money
 * twice. The operation's outbox events (money event, audit records) are written with the stored
 * answer, in one statement.
 */
export async function runFlowOperation(
  pool: DatabasePool,
  tenantId: string,
  use: IdempotencyUse,
  operation: (tx: DatabaseTransactionConnection) => Promise<{ view: TransactionView; events: EventInput[] }>,
): Promise<TransactionView> {
  const answer = await runIdempotent(pool, idempotentRequestOf(tenantId, use), async (tx) => {
    const { view, events } = await operation(tx);
    return { statusCode: 200, body: view, outbox: events.map(outboxEventOf) };
  });
  return answer.body;
}
