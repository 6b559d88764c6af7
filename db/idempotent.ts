import { createHash } from 'node:crypto';
import { canonicalJson } from '../common/audit/chain';
import { problems } from '../common/problems';
import type { DatabasePool, DatabaseTransactionConnection } from './pool';
import { withTenant } from './tenant';
import { insertStoredAnswer, selectStoredAnswer, type IdempotencyScope, type StoredAnswer } from './queries/idempotency/keys.queries';

export interface Answer<T = unknown> {
  statusCode: number;
  body: T;
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

/** Stores the answer in the operation's own transaction (workflow activities call this directly). */
export async function storeAnswer(tx: DatabaseTransactionConnection, request: IdempotentRequest, answer: Answer): Promise<void> {
  const stored = await insertStoredAnswer(tx, request, { requestHash: request.hash, statusCode: answer.statusCode, response: answer.body }, request.ttlHours);
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
  operation: (tx: DatabaseTransactionConnection) => Promise<Answer<T>>,
): Promise<Answer<T>> {
  try {
    return await withTenant(pool, request.tenantId, async (tx) => {
      const replay = await storedAnswerFor(tx, request);
      if (replay) return replay as Answer<T>;
      const answer = await operation(tx);
      await storeAnswer(tx, request, answer);
      return answer;
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
