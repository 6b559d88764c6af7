import { createInterface } from 'node:readline';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createMaintenanceActivities } from '../../activities/maintenance/expire-stale-records.activities';
import { config } from '../../common/config';
import { createLogger } from '../../common/logger';
import { contextBoundLogger } from '../../common/temporal/activity-context';
import { clientInterceptors } from '../../common/temporal/client-interceptors';
import { temporalConnectionOptions } from '../../common/temporal/connection-options';
import { platformDataConverter } from '../../common/temporal/data-converter';
import { createDbPool } from '../../db/pool';
import { ensureSchedule, expireStaleRecordsSchedule } from '../../workers/schedules';
import { installWorkerRuntime } from '../../workers/temporal/runtime';
import { bundleWorkflows, createDomainWorker } from '../../workers/temporal/worker';

/**
 * One worker replica in a process of its own, doing at start what workers/main.ts does for the
 * maintenance domain: a Worker on the maintenance activities, then ensureSchedule of the sweep's
 * Schedule, then polling — but under the Schedule id, task queue and interval the test names, so the
 * platform's own Schedule is untouched (test/integration/replicas-schedules.int.test.ts). It ensures
 * the Schedule when a line `ensure` arrives on stdin, so the test can make two replicas ensure at the
 * same moment; it logs `schedule ensured` with the outcome, then `schedule worker running`.
 * Arguments: Schedule id, task queue, interval in minutes (a fraction for seconds). The sweep runs
 * on DATABASE_OWNER_URL, which the test points at a scratch database of its own.
 */
async function main(): Promise<void> {
  const [scheduleId, taskQueue, intervalMinutes] = process.argv.slice(2);
  const cfg = config();
  const logger = createLogger('schedule-worker-replica', 'info');
  installWorkerRuntime(logger, { metricsPort: cfg.workerMetrics.port });
  const fleetPool = await createDbPool(cfg.db.ownerUrl, { name: 'schedule-worker-replica', maxPoolSize: 2 });
  const connection = await NativeConnection.connect(temporalConnectionOptions(cfg.temporal));
  const dataConverter = await platformDataConverter(cfg.temporalCodec);
  const worker = await createDomainWorker({
    connection, namespace: cfg.temporal.namespace, taskQueue, workflowBundle: await bundleWorkflows(), dataConverter,
    activities: createMaintenanceActivities({ fleetPool, logger: contextBoundLogger(logger) }),
  });
  const client = new Client({ connection, namespace: cfg.temporal.namespace, dataConverter, interceptors: clientInterceptors });
  logger.info('schedule worker ready to ensure');

  const lines = createInterface({ input: process.stdin });
  await new Promise<void>((resolve) => lines.on('line', (line) => { if (line.trim() === 'ensure') resolve(); }));
  lines.close();
  const outcome = await ensureSchedule(client, expireStaleRecordsSchedule({ scheduleId, taskQueue, intervalMinutes: Number(intervalMinutes), batchSize: 100 }));
  logger.info({ outcome }, 'schedule ensured');

  process.once('SIGTERM', () => worker.shutdown());
  const running = worker.run();
  logger.info({ taskQueue }, 'schedule worker running');
  try {
    await running;
  } finally {
    await connection.close();
    await fleetPool.end();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
