import { problems } from '../../common/problems';
import type { TemporalHandle } from '../../common/temporal/client';
import { TimeoutError, withTimeout } from '../../common/timeout';
import type { TransactionView } from '../../workflows/money/money.messages';
import type { MoneyJob } from './jobs';

/**
 * What a workflow-backed money request answers: its final transaction, or, when its deadline passed
 * while its workflow still ran, the job that workflow is (202, `Location: /v1/jobs/{jobId}`).
 */
export type FlowAnswer = { transaction: TransactionView } | { jobId: string };

/** Filled in by the work once it hands its workflow to Temporal: before that there is no job to name. */
export interface JobMark {
  job?: MoneyJob;
}

export interface FlowDeadlineDeps {
  /** GRPC_CALL_TIMEOUT_MS: the deadline every downstream call of the gateway has (docs/reference/gateway.md#rule-12). */
  deadlineMs: number;
  temporal: () => TemporalHandle | undefined;
}

/**
 * How long the check that the workflow exists may add to the deadline: a describe is one short
 * call, and a Temporal server too slow for it is better answered with 504 than waited for.
 */
const RUNNING_CHECK_MS = 1_000;

/**
 * Runs a money request's work within the gateway's deadline (the route declares `ownDeadline`, so
 * this replaces downstreamCall's 504). Past the deadline the work is not cancelled: it goes on, with
 * its admission slot, until its workflow answers. If its workflow exists by then, the client gets
 * that workflow's job instead of a 504 that would leave it guessing whether the money moved; the
 * same Idempotency-Key later replays the final transaction. A request whose workflow Temporal has
 * not taken yet has no job to follow, and still answers 504 gateway-timeout.
 */
export async function answerByDeadline(
  deps: FlowDeadlineDeps, tenantId: string, work: (mark: JobMark) => Promise<TransactionView>,
): Promise<FlowAnswer> {
  const mark: JobMark = {};
  let settled = false;
  const operation = work(mark).finally(() => { settled = true; });
  try {
    return { transaction: await withTimeout(operation, deps.deadlineMs, 'The money service') };
  } catch (error) {
    if (!(error instanceof TimeoutError)) throw error;
  }
  // Its late outcome belongs to the job now; nobody awaits it here.
  operation.catch(() => undefined);
  const job = mark.job;
  const running = job !== undefined && await workflowExists(deps, tenantId, job.workflowId);
  // It may have finished while the check ran: then its own answer is the better one.
  if (settled) return { transaction: await operation };
  if (running) return { jobId: job.jobId };
  throw problems.timeout(`The money service did not answer within ${deps.deadlineMs} ms`);
}

/**
 * Whether the job's workflow can be read as the job (services/jobs/read-job.ts): it exists, was
 * started for this tenant (memo), and runs or completed. A run that failed is a previous attempt of
 * the key, not this one.
 */
async function workflowExists(deps: FlowDeadlineDeps, tenantId: string, workflowId: string): Promise<boolean> {
  const temporal = deps.temporal();
  if (!temporal) return false;
  try {
    const description = await temporal.connection.withDeadline(
      Date.now() + RUNNING_CHECK_MS, () => temporal.client.workflow.getHandle(workflowId).describe(),
    );
    return description.memo?.tenantId === tenantId && ['RUNNING', 'COMPLETED'].includes(description.status.name);
  } catch {
    // Not found, or Temporal too slow to say: nothing the client could follow.
    return false;
  }
}
