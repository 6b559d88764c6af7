import { jobStatusOf } from '../../../services/jobs/workflow-status';
import { JOB_ID_PATTERN, jobIdOf, parseJobId } from '../../../common/jobs';

/** The two rules of docs/decisions/jobs.md that are pure: the id format and the status table. */
describe('job ids', () => {
  it.each([
    ['audit-cold-export.3f2a9c0d5e7b41c8a6d2e0f1b4c3a597', true],
    ['files-process.01a21009-5aac-71a9-9a5f-006319e0b30b', true],
    ['3f2a9c0d5e7b41c8a6d2e0f1b4c3a597', false],
    ['audit-cold-export.', false],
    ['Audit.abc', false],
    ['audit.cold-export.abc', false],
    ['audit-cold-export.a b', false],
  ])('%s is a job id: %s', (jobId, valid) => {
    expect(JOB_ID_PATTERN.test(jobId)).toBe(valid);
  });

  it('parses what it formats', () => {
    expect(parseJobId(jobIdOf('files-process', '01a21009-5aac'))).toEqual({ kind: 'files-process', localId: '01a21009-5aac' });
  });
});

describe('a job status from its workflow status', () => {
  it.each([
    ['RUNNING', 'running'],
    ['PAUSED', 'running'],
    ['CONTINUED_AS_NEW', 'running'],
    ['UNSPECIFIED', 'running'],
    ['UNKNOWN', 'running'],
    ['COMPLETED', 'completed'],
    ['FAILED', 'failed'],
    ['TIMED_OUT', 'failed'],
    ['CANCELLED', 'canceled'],
    ['TERMINATED', 'canceled'],
  ] as const)('%s → %s', (workflowStatus, jobStatus) => {
    expect(jobStatusOf(workflowStatus)).toBe(jobStatus);
  });
});
