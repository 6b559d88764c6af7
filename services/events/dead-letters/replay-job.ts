import { jobIdOf, type JobKind } from '../../../common/jobs';
import { deadLetterReplayWorkflowId, type DeadLetterReplayResult } from '../../../workflows/events/dead-letters.messages';

/** The kind of a replay-all job (GET /v1/jobs/{jobId}): `events-dlq-replay.<replayId>`. */
export const DEAD_LETTER_REPLAY_JOB = 'events-dlq-replay';

/** Retrying and replaying dead letters need events.dlq.retry (migration 0033); following a replay's job needs the same. */
export const DEAD_LETTER_RETRY_PERMISSION = 'events.dlq.retry';

/** The replay ids the start issues: UUID v7 (common/ids newId). */
const REPLAY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The public id of a replay-all, as its 202 answers it. */
export function replayJobIdOf(replayId: string): string {
  return jobIdOf(DEAD_LETTER_REPLAY_JOB, replayId);
}

/**
 * A replay-all job is done when its workflow is (after its last continue-as-new); its result is the
 * workflow's, the totals DLQReplayAll answers. The workflow id names the tenant only (one replay per
 * tenant at a time, run again for the next request), so the job is the run whose memo carries its id.
 */
export const deadLetterReplayJobKind: JobKind = {
  name: DEAD_LETTER_REPLAY_JOB,
  title: 'dead-letter replay',
  permission: DEAD_LETTER_RETRY_PERMISSION,
  localId: REPLAY_ID,
  workflowId: (tenantId) => deadLetterReplayWorkflowId(tenantId),
  memoLocalId: 'replayId',
  async outcome(execution) {
    if (execution.status !== 'completed') return undefined;
    const { replayed, skippedAlreadyResolved } = await execution.handle.result() as DeadLetterReplayResult;
    return { completedAt: null, result: { replayed, skippedAlreadyResolved } satisfies DeadLetterReplayResult };
  },
};
