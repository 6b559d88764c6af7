import { Problem, type ProblemType } from '../../common/problems';

/** The refusals an activity or workflow may answer with (their ApplicationFailure type is the suffix). */
const REFUSALS = new Set<string>([
  'validation-error', 'not-found', 'insufficient-funds', 'invalid-amount', 'hold-limit-exceeded', 'hold-expired',
  'hold-settled', 'idempotency-conflict', 'plan-limit-exceeded', 'billing-unavailable', 'forbidden',
]);

/**
 * A money workflow's business refusal (a failed update's ApplicationFailure, or a workflow's
 * `{ ok: false, problem }` result) as the problem the activity refused with; undefined for a type
 * that is no refusal, which is then a fault, not an answer.
 */
export function refusalProblem(type: string | undefined | null, detail: string, extensions: Record<string, unknown> = {}): Problem | undefined {
  return type && REFUSALS.has(type) ? new Problem(type as ProblemType, detail, extensions) : undefined;
}
