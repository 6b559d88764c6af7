import type { WorkflowHandle } from '@temporalio/client';
import type { Problem } from '../../common/problems';

/** What a job handle says of its work (docs/decisions/jobs.md maps Temporal's statuses onto these). */
export const JOB_STATUSES = ['running', 'completed', 'failed', 'canceled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** GET /v1/jobs/{jobId}: the error is a problem, rendered as RFC 9457 by the route. */
export interface JobView {
  jobId: string;
  kind: string;
  status: JobStatus;
  startedAt: string;
  completedAt: string | null;
  result?: unknown;
  error?: Problem;
}

/** A job's workflow, described, as its kind reads it. */
export interface JobExecution {
  tenantId: string;
  localId: string;
  /** The workflow's status mapped to a job's: running or completed (failed and canceled never reach the kind). */
  status: JobStatus;
  /** When the workflow closed (ISO 8601); null while it runs. */
  closedAt: string | null;
  /** The workflow's memo, decoded. */
  memo: Record<string, unknown>;
  /** For kinds whose result is the workflow's return value (`handle.result()`) or the answer of a query. */
  handle: WorkflowHandle;
}

export interface JobOutcome {
  /** When the work was done, if the kind knows better than the workflow's close time. */
  completedAt: string | null;
  result: unknown;
  /**
   * A job whose work ended in a refusal the workflow completed with (a business outcome, not a
   * fault): the job is failed with this problem instead of a result.
   */
  error?: Problem;
}

/** One kind of job: how to find its workflow, who may read it, and how its result is rendered. */
export interface JobKind {
  /** The first part of its job ids, and the `kind` member of its jobs. */
  name: string;
  /** What the job is, for problem details: `cold export`. */
  title: string;
  /** The permission of the route that starts such a job: reading the job needs the same. */
  permission: string;
  /** The local ids this kind issues; any other id of the kind names no job. */
  localId: RegExp;
  /** The workflow of a job of the tenant: a business key that names the tenant (STYLE rule 8). */
  workflowId(tenantId: string, localId: string): string;
  /**
   * For a kind whose workflow id does not name the job (one workflow id per tenant, run again for
   * each job, like the dead-letter replay): the memo member that holds the job's local id. A run of
   * another job under the same workflow id is then not this job (404), as a missing workflow is not.
   */
  memoLocalId?: string;
  /**
   * The job's result once the job is done, undefined while it is not. Most workflows are done when
   * they complete; a kind whose workflow goes on after the work (the cold export keeps its file
   * until it expires) says so here. A workflow that completed always has an outcome.
   */
  outcome(execution: JobExecution): Promise<JobOutcome | undefined>;
}
