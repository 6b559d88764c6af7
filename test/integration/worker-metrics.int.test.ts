import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { newId } from '../../common/ids';
import type { moneyHoldSweep } from '../../workflows/money/hold-sweep.workflow';
import { startWorkerProcess, type WorkerProcess } from '../helpers/money-worker';
import { connectDevServer, uniqueTaskQueue, type DevServer } from '../helpers/temporal';

/**
 * The worker's Prometheus endpoint (WORKER_METRICS_PORT, workers/temporal/runtime.ts) serves the
 * Temporal SDK's worker metrics. The SDK's runtime can be installed once per process, and a Jest
 * worker has its own (test/helpers/temporal.ts), so the worker runs as a child process assembled as
 * workers/main.ts assembles it (test/helpers/domain-worker-process.ts): the money Worker on a task
 * queue of its own on the dev server, with a free port. One run of the hold sweep (the safety net
 * its Schedule runs every minute anyway) gives it a workflow task and an activity to measure.
 */
jest.setTimeout(90_000);

const taskQueue = uniqueTaskQueue('worker-metrics');
let port: number;
let worker: WorkerProcess | undefined;
let server: DevServer;

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port: free } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return free;
}

const metricsWorker = (metricsPort: number) =>
  startWorkerProcess('test/helpers/money-worker-entry.ts', 'money worker running', [], { MONEY_TASK_QUEUE: taskQueue, WORKER_METRICS_PORT: String(metricsPort) });

/** The endpoint's text once every name in `names` is in it (gauges appear once the worker sets them). */
async function metricsWith(names: string[], deadlineMs = 30_000): Promise<string> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((response) => response.text(), () => '');
    if (names.every((name) => text.includes(name)) || Date.now() >= deadline) return text;
    await sleep(250);
  }
}

beforeAll(async () => {
  port = await freePort();
  [worker, server] = await Promise.all([metricsWorker(port), connectDevServer()]);
});

afterAll(async () => {
  await worker?.stop('SIGTERM');
  await server?.close();
});

it('serves the SDK\'s task slots, schedule-to-start latencies and sticky cache, under the temporal_ prefix', async () => {
  await server.client.workflow.execute<typeof moneyHoldSweep>('moneyHoldSweep', {
    taskQueue, workflowId: `test.worker-metrics:${newId()}`, args: [{ graceSeconds: 60, batchSize: 1 }],
  });

  const names = [
    'temporal_worker_task_slots_available',
    'temporal_worker_task_slots_used',
    'temporal_workflow_task_schedule_to_start_latency',
    'temporal_activity_schedule_to_start_latency',
    'temporal_sticky_cache_size',
  ];
  const text = await metricsWith(names);
  for (const name of names) expect(text).toContain(name);
  // Labelled by this worker's task queue, so each queue's slots can be told apart.
  expect(text).toMatch(new RegExp(`temporal_worker_task_slots_available\\{[^}]*task_queue="${taskQueue.replaceAll('.', '\\.')}"`));
});

it('stops a second worker that would share the port, rather than running it without metrics', async () => {
  await expect(metricsWorker(port)).rejects.toThrow(/exited \(1\) before polling/);
});
