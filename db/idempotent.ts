import { createHash } from 'node:crypto';
import { canonicalJson } from '../common/audit/chain';
import { outboxInsertOf, type EventInput } from '../common/events/publish';
import { problems } from '../common/problems';
import type { DatabasePool, DatabaseTransactionConnection } from './pool';
import { withTenant } from './tenant';
import { insertStoredAnswer, selectStoredAnswer, type IdempotencyScope, type StoredAnswer } from './queries/idempotency/keys.queries';

export interface Answer<T = unknown> {
  statusCode: number;
  body: T;
}

/**
 * What an operation run by runIdempotent produces: its answer, and the outbox events of its change
 * (money events, audit records), which runIdempotent writes in the same statement as the stored
 * answer, in the operation's transaction: one round trip for both.
 */
export interface Outcome<T = unknown> extends Answer<T> {
  events?: readonly EventInput[];
}

/** One use of an Idempotency-Key: where, with which request (its hash), kept for how long. */
export interface IdempotentRequest extends IdempotencyScope {
  hash: string;
  ttlHours: number;
}

/** What identifies "the same request": its path parameters and body, independent of key order. */
export function requestHash(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}

/** The answer stored for this key, or null; the key used with another request is a 409. */
export async function storedAnswerFor(tx: DatabaseTransactionConnection, request: IdempotentRequest): Promise<Answer | null> {
  const stored = await selectStoredAnswer(tx, request);
  return stored && replayOf(stored, request.hash);
}

function replayOf(stored: StoredAnswer, hash: string): Answer {
  if (stored.requestHash !== hash) throw problems.idempotencyConflict();
  return { statusCode: stored.statusCode, body: stored.response };
}

/** The key was answered by a concurrent request that committed first: this one rolls back and replays. */
class KeyAnsweredMeanwhile extends Error {}

/** Stores the answer, and writes the outcome's events, in the operation's own transaction. */
async function storeAnswer(tx: DatabaseTransactionConnection, request: IdempotentRequest, outcome: Outcome): Promise<void> {
  const stored = await insertStoredAnswer(
    tx, request, { requestHash: request.hash, statusCode: outcome.statusCode, response: outcome.body }, request.ttlHours,
    outcome.events?.length ? outboxInsertOf(outcome.events) : null,
  );
  if (!stored) throw new KeyAnsweredMeanwhile(`idempotency key ${request.key} was answered meanwhile`);
}

/**
 * Runs a single-transaction operation at most once per key (document 2, Money rule 1): the answer is
 * stored in the operation's own transaction, so a retry after a crash between commit and response
 * gets exactly what was committed. Two concurrent requests with the same key: the second blocks on
 * the key's row when storing its answer, finds the first's, rolls its work back and replays it.
 * A failed operation stores nothing, so a retry of a refused request is evaluated again.
 */
export async function runIdempotent<T>(
  pool: DatabasePool,
  request: IdempotentRequest,
  operation: (tx: DatabaseTransactionConnection) => Promise<Outcome<T>>,
): Promise<Answer<T>> {
  try {
    return await withTenant(pool, request.tenantId, async (tx) => {
      const replay = await storedAnswerFor(tx, request);
      if (replay) return replay as Answer<T>;
      const outcome = await operation(tx);
      await storeAnswer(tx, request, outcome);
      return { statusCode: outcome.statusCode, body: outcome.body };
    });
  } catch (error) {
    if (!(error instanceof KeyAnsweredMeanwhile)) throw error;
    return withTenant(pool, request.tenantId, async (tx) => {
      const stored = await selectStoredAnswer(tx, request);
      if (!stored) throw error;
      return replayOf(stored, request.hash) as Answer<T>;
    });
  }
}
