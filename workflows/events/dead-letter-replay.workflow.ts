import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { DeadLetterActivities } from '../../activities/events/dead-letters.activities';
import type { DeadLetterReplayInput, DeadLetterReplayResult, DeadLetterReplayTotals } from './dead-letters.messages';

/**
 * A page re-publishes up to perSecond (50) dead letters in one transaction and one producer batch:
 * seconds at most. The broker or the database being away is waited for (1 s doubling to 1 min
 * apart), never given up on: the replay resumes where it was once they are back.
 */
const replaying = proxyActivities<DeadLetterActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const NOTHING_YET: DeadLetterReplayTotals = { replayed: 0, skippedAlreadyResolved: 0 };
const SECOND_MS = 1000;

/**
 * DLQReplayAll (docs/reference/events.md#rule-18) for one tenant, under the workflow id `events.dlq-replay:<tenantId>`:
 * walks the tenant's dead letters oldest first, page by page, each page re-publishing at most
 * `perSecond` pending, non-quarantined ones for their consumer groups (and counting the resolved
 * ones it passes), and starts the next page no sooner than a second after the previous one started
 * (the throttle of docs/reference/events.md#rule-18: 50 events per second). Its state is the cursor and the totals,
 * so a worker that dies resumes at the page it was on (a page re-sent after a crash is re-published,
 * and consumers de-duplicate by event id). After pagesPerRun pages it continues as new with them.
 */
export async function deadLetterReplay(input: DeadLetterReplayInput): Promise<DeadLetterReplayResult> {
  const totals = { ...(input.totals ?? NOTHING_YET) };
  let after = input.after ?? null;
  let through = input.through ?? null;
  for (let pages = 1; ; pages += 1) {
    // Workflow time: the same on replay, and the time-skipping server's in tests.
    const startedAt = Date.now();
    const page = await replaying.replayDeadLetterPage({ tenantId: input.tenantId, replayId: input.replayId, limit: input.perSecond, after, through });
    totals.replayed += page.replayed;
    totals.skippedAlreadyResolved += page.skippedAlreadyResolved;
    if (page.next === null) return totals;
    after = page.next;
    through = page.through;
    const rest = SECOND_MS - (Date.now() - startedAt);
    if (rest > 0) await sleep(rest);
    if (pages >= input.pagesPerRun) return continueAsNew<typeof deadLetterReplay>({ ...input, after, through, totals });
  }
}
