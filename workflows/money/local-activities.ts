import { ActivityFailure, ApplicationFailure, patched, proxyLocalActivities } from '@temporalio/workflow';
import type { MoneyActivities } from '../../activities/money';
import type { Refused } from './money.messages';

/**
 * Every money operation is one database transaction, run as a local activity: it executes in the
 * workflow task's own worker, with no activity task round trip through the server, which is what
 * makes a hold or a transfer cost about one workflow task (issue 6, performance).
 *
 * A caller waits on these, so they retry exactly as docs/reference/money.md#rule-9 says for deadlocks (3
 * retries at 100, 200 and 400 ms) and then give up; business refusals are non-retryable failures
 * typed with their problem suffix (activities/failures.ts) and fail at once.
 */
export const requested = proxyLocalActivities<MoneyActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '100 milliseconds', backoffCoefficient: 2, maximumAttempts: 4 },
});

/** Expiry has nobody waiting on it and must happen eventually: it retries until it succeeds. */
export const background = proxyLocalActivities<MoneyActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * A refusal as the caller should get it: the activity's own ApplicationFailure (its type is the
 * problem suffix) rather than the ActivityFailure around it. Other failures pass unchanged.
 */
export function refusalOf(error: unknown): unknown {
  if (error instanceof ActivityFailure && error.cause instanceof ApplicationFailure) return error.cause;
  return error;
}

/**
 * How a money workflow ends when its operation failed: a business refusal (a non-retryable
 * ApplicationFailure typed with its problem suffix, docs/decisions/money.md) is its result, and the workflow
 * completes; a real fault (retries exhausted, a bug) is thrown and fails it. Before the patch every
 * refusal failed the workflow; the histories of that code replay through the throw (docs/decisions/testing.md).
 */
export function refusedOrThrow(failure: unknown): Refused {
  if (failure instanceof ApplicationFailure && failure.nonRetryable && failure.type && patched('money-refusal-as-result')) {
    const extensions = (failure.details?.[0] ?? {}) as Record<string, unknown>;
    return { ok: false, problem: { type: failure.type, detail: failure.message, extensions } };
  }
  throw failure;
}

/** The idempotency-conflict refusal (docs/reference/conventions.md#rule-21) of a key reused with another body. */
export function checkSameRequest(expected: string, given: string): void {
  if (expected !== given) {
    throw ApplicationFailure.create({
      type: 'idempotency-conflict', nonRetryable: true, message: 'This Idempotency-Key was used with a different request body',
    });
  }
}
