import { createHash } from 'node:crypto';
import { canonicalJson } from '../../common/canonical-json';
import { problems } from '../../common/problems';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { outboxInsert, type NewOutboxEvent } from '../../db/queries/events/outbox.queries';
import {
  insertStoredAnswer, lockIdempotencyKey, selectStoredAnswer, type IdempotencyScope, type StoredAnswer,
} from '../../db/queries/idempotency/keys.queries';

export interface Answer<T = unknown> {
  statusCode: number;
  body: T;
}

/**
 * What an operation run by runIdempotent produces: its answer, and the outbox rows of its change
 * (money events, audit records), which runIdempotent writes in the same statement as the stored
 * answer, in the operation's transaction: one round trip for both. The rows come checked from the
 * outbox writer (outboxEventOf, services/events/publish.ts): idempotency sits below the event bus in
 * the order of services (docs/architecture.md), which itself publishes idempotently.
 */
export interface Outcome<T = unknown> extends Answer<T> {
  outbox?: readonly NewOutboxEvent[];
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

/** The key holds a live answer already (a retry, a concurrent request that committed first): this attempt rolls back. */
class KeyAlreadyAnswered extends Error {}

/** Stores the answer, and writes the outcome's events, in the operation's own transaction. */
async function storeAnswer(tx: DatabaseTransactionConnection, request: IdempotentRequest, outcome: Outcome): Promise<void> {
  const stored = await insertStoredAnswer(
    tx, request, { requestHash: request.hash, statusCode: outcome.statusCode, response: outcome.body }, request.ttlHours,
    outcome.outbox?.length ? outboxInsert(outcome.outbox) : null,
  );
  if (!stored) throw new KeyAlreadyAnswered(`idempotency key ${request.key} holds an answer already`);
}

/**
 * Runs a single-transaction operation at most once per key (docs/reference/conventions.md#rule-21): the answer is
 * stored in the operation's own transaction, so a retry after a crash between commit and response
 * gets exactly what was committed.
 *
 * Optimistic: the operation runs first and its answer is stored at the end, where a live answer
 * already under the key (a retry, a concurrent request that committed first: the store waits on the
 * key's row) rolls everything back and is replayed instead, or answers 409 idempotency-conflict for
 * another body. Looking the key up first would cost every request one more round trip to spare the
 * rare retry some work that is rolled back anyway. A refusal (a retry now refused because the first
 * attempt spent the money, another body refused for its own reason) is checked against a stored
 * answer the same way before it is passed on; a refused request stores nothing, so a retry of it is
 * evaluated again.
 */
export async function runIdempotent<T>(
  pool: DatabasePool,
  request: IdempotentRequest,
  operation: (tx: DatabaseTransactionConnection) => Promise<Outcome<T>>,
): Promise<Answer<T>> {
  try {
    return await withTenant(pool, request.tenantId, async (tx) => {
      const outcome = await operation(tx);
      await storeAnswer(tx, request, outcome);
      return { statusCode: outcome.statusCode, body: outcome.body };
    });
  } catch (error) {
    // Whatever the lookup's own trouble, the operation's error is the one to report.
    const stored = await withTenant(pool, request.tenantId, (tx) => selectStoredAnswer(tx, request)).catch(() => null);
    if (!stored) throw error;
    return replayOf(stored, request.hash) as Answer<T>;
  }
}

/**
 * For an operation whose effect leaves the database and cannot be rolled back (a record sent to
 * Kafka): the key is locked before the lookup, so of two concurrent requests with one key the
 * second waits, then finds the first's answer instead of repeating the effect. A refusal (a
 * problem) stores nothing. `replayed` tells a stored answer from a fresh one. The operation gets
 * the key's transaction for what it writes beside its effect (the usage it counts), which then
 * commits with the stored answer, rolls back with a refusal, and is never written for a replay.
 */
export async function runIdempotentEffect<T>(
  pool: DatabasePool,
  request: IdempotentRequest,
  operation: (tx: DatabaseTransactionConnection) => Promise<Answer<T>>,
): Promise<Answer<T> & { replayed: boolean }> {
  return withTenant(pool, request.tenantId, async (tx) => {
    await lockIdempotencyKey(tx, request);
    const stored = await storedAnswerFor(tx, request);
    if (stored) return { ...(stored as Answer<T>), replayed: true };
    const answer = await operation(tx);
    await storeAnswer(tx, request, answer);
    return { ...answer, replayed: false };
  });
}
