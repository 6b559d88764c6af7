import type { ScheduleHandle } from '@temporalio/client';
import { newId } from '../../common/ids';
import { eventually } from '../helpers/audit';
import { createMigratedDatabase, type MigratedDatabase } from '../helpers/db';
import { spawnReplica, type ReplicaProcess } from '../helpers/replica-processes';
import { connectDevServer, terminateRunningOn, uniqueTaskQueue, type DevServer } from '../helpers/temporal';
import { remainingRecords, seedRecords } from '../workflows/fixtures/expired-records';

/**
 * Fleet-wide sweeps run once per period, not once per worker (docs/decisions/temporal.md, Maintenance
 * schedule). Two worker replicas, each a process of its own
 * (test/helpers/schedule-worker-entry.ts, doing what workers/main.ts does at start), ensure the
 * maintenance sweep's Schedule at the same moment and poll its task queue. The Schedule exists once and
 * its action starts one workflow per period: the server names each run `<schedule id>-<nominal time>`, so
 * a period run twice would show as two runs of one nominal time. maintenance-schedule.int.test.ts covers
 * one worker ensuring twice in a row and a triggered run.
 *
 * The other periodic work of the background tier is guarded elsewhere: the outbox relay's housekeeping
 * runs on the leader only (replicas-outbox-relay.int.test.ts), the audit fallback replay on every
 * consumer claims its rows with SKIP LOCKED (replicas-audit.int.test.ts), the consumer groups (the
 * staged-object consumer, the modules' subscribers) share partitions through Kafka.
 *
 * The replicas sweep a scratch database (their DATABASE_OWNER_URL): the real sweep every six seconds
 * on the shared one would delete the expired rows other files make on purpose. The test seeds expired
 * rows there and checks the sweep removed them, so it knows the replicas swept that database.
 */

jest.setTimeout(240_000);

/** Six seconds: the Schedule's every; the runs' nominal times fall on this grid. */
const INTERVAL_MINUTES = 0.1;
const PERIOD_MS = 6000;
const RUNS = 4;

let server: DevServer;
let db: MigratedDatabase;
let schedule: ScheduleHandle | undefined;
let taskQueue: string | undefined;
const workers: ReplicaProcess[] = [];

beforeAll(async () => {
  [server, db] = await Promise.all([connectDevServer(), createMigratedDatabase('replicas_schedules')]);
});

afterAll(async () => {
  await schedule?.delete().catch(() => undefined);
  await Promise.all(workers.map((worker) => worker.stop('SIGKILL')));
  if (taskQueue) await terminateRunningOn(server.client, taskQueue);
  await server?.close();
  await db?.close();
});

interface Run { workflowId: string; status: string }

async function runsOn(queue: string): Promise<Run[]> {
  const runs: Run[] = [];
  for await (const execution of server.client.workflow.list({ query: `TaskQueue = '${queue}'` })) {
    runs.push({ workflowId: execution.workflowId, status: execution.status.name });
  }
  return runs;
}

it('is created once when two workers ensure it at the same moment, and starts its sweep once per period', async () => {
  const scheduleId = `test.replicas.expire-stale-records.${newId()}`;
  const queue = uniqueTaskQueue('replicas-schedules');
  taskQueue = queue;
  schedule = server.client.schedule.getHandle(scheduleId);
  const tenantId = newId();
  await seedRecords(db.owner, tenantId, { expiredKeys: 2, liveKeys: 1, expiredTokens: 1, liveTokens: 1, expiredFamilies: 1, graceFamilies: 1, liveFamilies: 1 });
  for (let replica = 0; replica < 2; replica += 1) {
    workers.push(spawnReplica('test/helpers/schedule-worker-entry.ts', [scheduleId, queue, String(INTERVAL_MINUTES)], {
      DATABASE_OWNER_URL: db.ownerUrl,
    }));
  }
  // Both bundled their workflows and connected; then both ensure at once.
  await Promise.all(workers.map((worker) => worker.log.waitForMessage('schedule worker ready to ensure', 120_000)));
  for (const worker of workers) worker.send('ensure');
  const outcomes = await Promise.all(workers.map(async (worker) => (await worker.log.waitForMessage('schedule ensured')).outcome));
  expect(outcomes.sort()).toEqual(['created', 'updated']);
  await Promise.all(workers.map((worker) => worker.log.waitForMessage('schedule worker running')));

  const listed: string[] = [];
  await eventually(async () => {
    listed.length = 0;
    for await (const summary of server.client.schedule.list()) if (summary.scheduleId === scheduleId) listed.push(summary.scheduleId);
    return listed.length > 0;
  }, 'the Schedule listed', 30_000);
  expect(listed).toEqual([scheduleId]);

  await eventually(async () => (await runsOn(queue)).filter((run) => run.status === 'COMPLETED').length >= RUNS, `${RUNS} sweeps completed`, 150_000);
  await schedule.pause('the test has counted its periods');
  // Visibility lists every run the Schedule started, each finished.
  let actions = -1;
  await eventually(async () => {
    actions = (await schedule!.describe()).info.numActionsTaken;
    const runs = await runsOn(queue);
    return runs.length === actions && runs.every((run) => run.status !== 'RUNNING');
  }, 'every run the Schedule took listed and finished', 60_000);

  const runs = await runsOn(queue);
  expect(runs.length).toBeGreaterThanOrEqual(RUNS);
  expect(runs.filter((run) => run.status !== 'COMPLETED')).toEqual([]);
  expect(runs.filter((run) => !run.workflowId.startsWith(`${scheduleId}-`))).toEqual([]);
  const nominal = runs.map((run) => Date.parse(run.workflowId.slice(scheduleId.length + 1)));
  // One run per nominal time, each on the period grid: no period ran twice (two workers, one Schedule).
  expect(nominal.filter((time) => Number.isNaN(time) || time % PERIOD_MS !== 0)).toEqual([]);
  expect(new Set(nominal).size).toBe(runs.length);
  // The sweeps ran on the scratch database.
  expect(await remainingRecords(db.owner, tenantId)).toEqual({
    expiredKeys: 0, liveKeys: 1, expiredTokens: 0, liveTokens: 1, expiredFamilies: 0, graceFamilies: 1, liveFamilies: 1,
  });

  expect(await Promise.all(workers.map((worker) => worker.stop('SIGTERM')))).toEqual([0, 0]);
});
