import type { ParameterizedContext } from 'koa';
import type { FlowAnswer } from '../../../services/money/flow-deadline';
import { acceptJob } from '../../http/job-accepted';

/** What every workflow-backed money route says of overload (issue 19, docs/decisions/money.md). */
export const OVERLOAD_ANSWERS = ' Past the gateway deadline (GRPC_CALL_TIMEOUT_MS) while its workflow still runs: 202 with the job '
  + '(Location: /v1/jobs/{jobId}); the same Idempotency-Key later answers the final transaction. More than '
  + 'MONEY_MAX_IN_FLIGHT_PER_TENANT of the tenant\'s holds, transfers, confirms and cancels in flight: 429 '
  + 'rate-limit-exceeded with Retry-After, and nothing is started.';

/** The final transaction (200), or the job of the workflow still running when the deadline passed (202). */
export function answerFlow(ctx: ParameterizedContext, answer: FlowAnswer): void {
  if ('jobId' in answer) acceptJob(ctx, answer.jobId);
  else ctx.body = answer.transaction;
}
