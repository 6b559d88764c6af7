import type { WorkflowHandle } from '@temporalio/client';
import type { Problem } from './problems';

/**
 * The contract of a job (docs/decisions/jobs.md): its public id and what each kind of job says of its
 * workflow. Every domain whose work answers 202 implements a JobKind, and services/jobs/ reads any job
 * through the kinds: the contract knows no domain, so it lives in the kernel, below both.
 */

/**
 * The public id of a job (docs/decisions/jobs.md): `<kind>.<localId>`, for example
 * `audit-cold-export.3f2a…`. The kind says which workflow to describe and which permission reads
 * it; the tenant is never part of the id: it comes from the caller's token, so an id carried into
 * another tenant names a workflow that does not exist there.
 */
export const JOB_ID_PATTERN = /^[a-z][a-z0-9-]{1,39}\.[A-Za-z0-9_-]{1,80}$/;

export interface ParsedJobId {
  kind: string;
  localId: string;
}

export function jobIdOf(kind: string, localId: string): string {
  return `${kind}.${localId}`;
}

/** The kind and local id of a well-formed job id (JOB_ID_PATTERN, checked by resolveJob). */
export function parseJobId(jobId: string): ParsedJobId {
  const dot = jobId.indexOf('.');
  return { kind: jobId.slice(0, dot), localId: jobId.slice(dot + 1) };
}

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
  /** The workflow of a job of the tenant: a business key that names the tenant (docs/decisions/temporal.md, Workflow ids). */
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
