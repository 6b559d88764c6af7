import { ApplicationFailure } from '@temporalio/activity';
import { isProblem } from '../common/problems';

/**
 * Runs a use-case as an activity: a business refusal (a Problem: insufficient-funds, a plan limit,
 * hold-expired, an unknown plan ...) becomes a non-retryable ApplicationFailure typed with the
 * problem suffix and carrying its extensions, which the gateway turns back into the same problem.
 * Everything else (a deadlock, a lost connection) is thrown as it is and retried by the caller's
 * retry policy.
 */
export async function refusalsAsFailures<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (!isProblem(error)) throw error;
    throw ApplicationFailure.create({
      type: error.type, message: error.detail, details: [error.extensions], nonRetryable: true,
    });
  }
}
