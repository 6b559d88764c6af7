import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { config } from '../../common/config';
import { createLogger } from '../../common/logger';
import { platformDataConverter } from '../../common/temporal/data-converter';
import { createObjectStore } from '../../common/object-store';
import { createSmtpSender } from '../../services/notify/smtp';
import { contextBoundLogger } from '../../common/temporal/activity-context';
import { createDbPool } from '../../db/pool';
import { installRuntimeLogger } from '../../workers/temporal/runtime-logger';
import { bundleWorkflows, createDomainWorker } from '../../workers/temporal/worker';

/**
 * The money domain's Worker alone, assembled as workers/main.ts assembles it, on the task queue
 * MONEY_TASK_QUEUE names (config.moneyFlows.taskQueue, the queue the gateway starts money workflows
 * on). Run as a child process (test/helpers/money-worker.ts) by the crash test, which SIGKILLs it,
 * and by bench/money-flows.ts. Logs `money worker running` once it polls; SIGTERM drains it.
 */
async function main(): Promise<void> {
  const cfg = config();
  const logger = createLogger('money-worker', cfg.logLevel);
  installRuntimeLogger(logger);

  const appPool = await createDbPool(cfg.db.url, { name: 'money-worker-app', maxPoolSize: cfg.db.poolSize });
  const fleetPool = await createDbPool(cfg.db.ownerUrl, { name: 'money-worker-fleet', maxPoolSize: 2 });
  const connection = await NativeConnection.connect({ address: cfg.temporal.address });
  const smtp = createSmtpSender(cfg.mail);
  const { money } = createActivities({ appPool, fleetPool, logger: contextBoundLogger(logger), objectStore: createObjectStore(cfg.s3), smtp });
  const taskQueue = cfg.moneyFlows.taskQueue;
  const worker = await createDomainWorker({
    connection, namespace: cfg.temporal.namespace, taskQueue, workflowBundle: await bundleWorkflows(), activities: money,
    dataConverter: await platformDataConverter(cfg.temporalCodec),
  });
  process.once('SIGTERM', () => worker.shutdown());
  const running = worker.run();
  logger.info({ taskQueue }, 'money worker running');
  try {
    await running;
  } finally {
    await connection.close();
    smtp.close();
    await Promise.all([appPool.end(), fleetPool.end()]);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
