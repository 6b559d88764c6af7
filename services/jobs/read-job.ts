import { WorkflowNotFoundError, type WorkflowExecutionDescription, type WorkflowHandle } from '@temporalio/client';
import { problems } from '../../common/problems';
import type { TemporalHandle } from '../../common/temporal/client';
import type { JobView } from '../../common/jobs';
import type { JobKinds, ResolvedJob } from './registry';
import { jobStatusOf } from './workflow-status';

export interface JobsDeps {
  kinds: JobKinds;
  /** Undefined until the gateway's start-up connection to Temporal succeeded. */
  temporal(): TemporalHandle | undefined;
}

/**
 * A job of the caller's tenant, read from its workflow. Tenant scoping twice: the workflow id is
 * built from the caller's tenant (never from the id), and the tenant the workflow was started for
 * (its memo) must be the caller's; either miss is 404 not-found, as for a job that never existed.
 * A failure is the registry's problem for a failed job: the workflow's own message stays in Temporal.
 */
export async function readJob(deps: JobsDeps, tenantId: string, job: ResolvedJob): Promise<JobView> {
  const temporal = deps.temporal();
  if (!temporal) throw problems.unavailable('The workflow service is not connected; try again shortly');
  const handle = temporal.client.workflow.getHandle(job.kind.workflowId(tenantId, job.localId));
  const description = await describeJob(handle);
  const memo = description.memo ?? {};
  if (memo.tenantId !== tenantId) throw problems.notFound('job');
  if (job.kind.memoLocalId !== undefined && memo[job.kind.memoLocalId] !== job.localId) throw problems.notFound('job');

  const status = jobStatusOf(description.status.name);
  const closedAt = description.closeTime?.toISOString() ?? null;
  const base = { jobId: job.jobId, kind: job.kind.name, startedAt: description.startTime.toISOString(), completedAt: closedAt };
  if (status === 'failed') return { ...base, status, error: problems.jobFailed(job.kind.title) };
  if (status === 'canceled') return { ...base, status };
  const outcome = await job.kind.outcome({ tenantId, localId: job.localId, status, closedAt, memo, handle });
  if (!outcome) return { ...base, status: 'running', completedAt: null };
  if (outcome.error) return { ...base, status: 'failed', completedAt: outcome.completedAt ?? closedAt, error: outcome.error };
  return { ...base, status: 'completed', completedAt: outcome.completedAt ?? closedAt, result: outcome.result };
}

async function describeJob(handle: WorkflowHandle): Promise<WorkflowExecutionDescription> {
  try {
    return await handle.describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw problems.notFound('job');
    throw error;
  }
}
