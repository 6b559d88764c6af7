import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { tsToMs } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createDeadLetterActivities, type WorkerProducer } from '../../activities/events/dead-letters.activities';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { ReconnectingProducer, type OutgoingRecord } from '../../common/kafka';
import { createDbPool, type DatabasePool } from '../../db/pool';
import type { DeadLetterRow } from '../../db/queries/events/dead-letters.queries';
import type { deadLetterReplay } from '../../workflows/events/dead-letter-replay.workflow';
import {
  deadLetterReplayWorkflowId, type DeadLetterReplayInput, type DeadLetterReplayTotals, type ReplayPage,
} from '../../workflows/events/dead-letters.messages';
import { migrateSharedDatabase } from '../helpers/db';
import { deadLetterState, seedDeadLetter } from '../helpers/dead-letters';
import { ensureCatalogueTopics, testKafka } from '../helpers/kafka';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';

/**
 * Replay-all (docs/reference/events.md#rule-18) under Temporal's time-skipping test server, with its real
 * activity (PostgreSQL on the application role, Kafka): the throttle read from the workflow's
 * history (pages, their times and its timers), continue-as-new carrying the cursor and the totals,
 * the resolved records counted as skipped, and a page whose send failed retried until it went out.
 */
jest.setTimeout(120_000);

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

let env: TestWorkflowEnvironment;
let owner: DatabasePool;
let app: DatabasePool;
let producer: ReconnectingProducer;

beforeAll(async () => {
  await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics()]);
  [env, owner, app] = await Promise.all([
    createTimeSkippingEnv(),
    createDbPool(config().db.ownerUrl, { name: 'test-dlq-replay-owner', maxPoolSize: 2 }),
    createDbPool(config().db.url, { name: 'test-dlq-replay-app', maxPoolSize: 2 }),
  ]);
  producer = new ReconnectingProducer(testKafka());
});

afterAll(async () => {
  await env?.teardown();
  await Promise.all([owner?.end(), app?.end(), producer?.reset()]);
});

const seedMany = (tenantId: string, count: number, options: Parameters<typeof seedDeadLetter>[2] = {}): Promise<DeadLetterRow[]> =>
  Promise.all(Array.from({ length: count }, () => seedDeadLetter(owner, tenantId, options)));

async function replay(tenantId: string, input: Partial<DeadLetterReplayInput>, workerProducer: WorkerProducer = producer) {
  const taskQueue = uniqueTaskQueue('events-dlq-replay');
  const worker = await createTestWorker(env, { taskQueue, activities: createDeadLetterActivities({ appPool: app, producer: workerProducer }) });
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof deadLetterReplay>('deadLetterReplay', {
      taskQueue, workflowId: deadLetterReplayWorkflowId(tenantId),
      args: [{ tenantId, replayId: newId(), perSecond: 50, pagesPerRun: 100, ...input }],
      memo: { tenantId },
    });
    const result = await handle.result();
    return { result, runs: await runsOf(handle) };
  });
}

/** The history of every run of the chain, first to last (following continue-as-new). */
async function runsOf(handle: WorkflowHandleWithFirstExecutionRunId): Promise<HistoryEvent[][]> {
  const runs: HistoryEvent[][] = [];
  let runId: string | undefined = handle.firstExecutionRunId;
  while (runId) {
    const events: HistoryEvent[] = (await env.client.workflow.getHandle(handle.workflowId, runId).fetchHistory()).events ?? [];
    runs.push(events);
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return runs;
}

const timeOf = (event: HistoryEvent): number => tsToMs(event.eventTime);
const decode = <T>(payloads: temporal.api.common.v1.IPayload[] | null | undefined): Promise<T> =>
  decodeFromPayloadsAtIndex<T>(env.client.options.loadedDataConverter, 0, payloads);

interface PageSeen {
  /** The workflow's time when it started the page: the workflow task that scheduled it. */
  startedAt: number;
  result: ReplayPage;
}

/** Each page of a run: when the workflow started it (its workflow task's start) and what its activity answered. */
async function pagesOf(events: HistoryEvent[]): Promise<PageSeen[]> {
  const pages: PageSeen[] = [];
  let taskStartedAt = 0;
  for (const event of events) {
    if (event.workflowTaskStartedEventAttributes) taskStartedAt = timeOf(event);
    if (event.activityTaskScheduledEventAttributes) pages.push({ startedAt: taskStartedAt, result: undefined as unknown as ReplayPage });
    if (event.activityTaskCompletedEventAttributes) pages.at(-1)!.result = await decode<ReplayPage>(event.activityTaskCompletedEventAttributes.result?.payloads);
  }
  return pages;
}

describe('deadLetterReplay workflow', () => {
  it('re-publishes at most 50 a second, continues as new with its totals, and counts the resolved ones as skipped', async () => {
    const tenantId = newId();
    const pending = await seedMany(tenantId, 120);
    const [quarantined] = await seedMany(tenantId, 2, { quarantined: true });
    const [retrying] = await seedMany(tenantId, 1, { status: 'retrying' });
    await seedMany(tenantId, 3, { status: 'resolved' });
    const [expired] = await seedMany(tenantId, 1, { status: 'expired' });
    const [elsewhere] = await seedMany(newId(), 1);

    const { result, runs } = await replay(tenantId, { pagesPerRun: 2 });

    expect(result).toEqual({ replayed: 120, skippedAlreadyResolved: 3 });
    // 50 + 50 in the first run, 20 in the second: it continued as new once, carrying the cursor and the totals.
    expect(runs).toHaveLength(2);
    const continued = runs[0].at(-1)!.workflowExecutionContinuedAsNewEventAttributes!;
    const carried = await decode<DeadLetterReplayInput>(continued.input?.payloads);
    expect(carried.totals).toEqual({ replayed: 100, skippedAlreadyResolved: expect.any(Number) } satisfies DeadLetterReplayTotals);
    expect(carried).toEqual(expect.objectContaining({ after: expect.any(String), through: expect.any(String), perSecond: 50, pagesPerRun: 2 }));

    const pages = (await Promise.all(runs.map(pagesOf))).flat();
    expect(pages.map((page) => page.result.replayed)).toEqual([50, 50, 20]);
    // The throttle is a rate on the workflow's clock: no page re-publishes more than 50, and each page
    // starts a second or more after the one before. How many timers that takes depends on the machine:
    // a page that itself lasted a second needs none, so only their length is asserted (the rest of a
    // second at most), never their number.
    expect(Math.max(...pages.map((page) => page.result.replayed))).toBeLessThanOrEqual(50);
    for (let index = 1; index < pages.length; index += 1) {
      expect(pages[index].startedAt - pages[index - 1].startedAt).toBeGreaterThanOrEqual(1000);
    }
    const timers = runs.flat().filter((event) => event.timerStartedEventAttributes);
    expect(timers.length).toBeLessThan(pages.length);
    for (const timer of timers) expect(tsToMs(timer.timerStartedEventAttributes!.startToFireTimeout)).toBeLessThanOrEqual(1000);

    for (const row of pending) expect((await deadLetterState(owner, row.id)).status).toBe('retrying');
    expect(await deadLetterState(owner, quarantined.id)).toEqual(expect.objectContaining({ status: 'pending', quarantined: true }));
    expect((await deadLetterState(owner, retrying.id)).status).toBe('retrying');
    expect((await deadLetterState(owner, expired.id)).status).toBe('expired');
    expect((await deadLetterState(owner, elsewhere.id)).status).toBe('pending');
  });

  it('leaves out dead letters that arrive after its first page, and ends at once when nothing is pending', async () => {
    const tenantId = newId();
    await seedMany(tenantId, 2, { status: 'resolved' });
    expect((await replay(tenantId, {})).result).toEqual({ replayed: 0, skippedAlreadyResolved: 2 });

    const [early] = await seedMany(tenantId, 3);
    let late: DeadLetterRow | undefined;
    // A dead letter written while the first page runs: after the cutoff that page took.
    const watching: WorkerProducer = {
      async send(records: readonly OutgoingRecord[]) {
        late ??= await seedDeadLetter(owner, tenantId);
        await producer.send(records);
      },
      reset: () => producer.reset(),
    };
    const { result } = await replay(tenantId, { perSecond: 2 }, watching);
    expect(result).toEqual({ replayed: 3, skippedAlreadyResolved: 2 });
    expect((await deadLetterState(owner, early.id)).status).toBe('retrying');
    expect((await deadLetterState(owner, late!.id)).status).toBe('pending');
  });

  it('retries a page whose send failed, on a fresh producer, and goes on where it was', async () => {
    const tenantId = newId();
    const rows = await seedMany(tenantId, 5);
    let sends = 0;
    let resets = 0;
    const flaky: WorkerProducer = {
      async send(records: readonly OutgoingRecord[]) {
        sends += 1;
        // The second page's first attempt: the broker went away.
        if (sends === 2) throw new Error('broker unreachable');
        await producer.send(records);
      },
      async reset() {
        resets += 1;
        await producer.reset();
      },
    };
    const { result, runs } = await replay(tenantId, { perSecond: 2 }, flaky);
    expect(result).toEqual({ replayed: 5, skippedAlreadyResolved: 0 });
    expect({ sends, resets }).toEqual({ sends: 4, resets: 1 });
    const attempts = runs.flat().filter((event) => event.activityTaskStartedEventAttributes).map((event) => event.activityTaskStartedEventAttributes!.attempt);
    expect(attempts).toEqual([1, 2, 1]);
    for (const row of rows) expect((await deadLetterState(owner, row.id)).status).toBe('retrying');
  });
});
