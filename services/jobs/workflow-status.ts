import type { WorkflowExecutionStatusName } from '@temporalio/client';
import type { JobStatus } from '../../common/jobs';

/**
 * Temporal's status of a job's workflow as a job status (docs/decisions/jobs.md). A run continued
 * as new is the same job still going (describing the workflow id follows it to its latest run); a
 * time-out is a failure of the work; a terminated run was stopped from outside, like a canceled one.
 * A status this SDK does not know yet (UNKNOWN, UNSPECIFIED) is not a closed run it can read.
 */
const JOB_STATUS_OF: Record<WorkflowExecutionStatusName, JobStatus> = {
  RUNNING: 'running',
  PAUSED: 'running',
  CONTINUED_AS_NEW: 'running',
  UNSPECIFIED: 'running',
  UNKNOWN: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  TIMED_OUT: 'failed',
  CANCELLED: 'canceled',
  TERMINATED: 'canceled',
};

export function jobStatusOf(workflowStatus: WorkflowExecutionStatusName): JobStatus {
  return JOB_STATUS_OF[workflowStatus];
}
