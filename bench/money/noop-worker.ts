import { NativeConnection } from '@temporalio/worker';
import { config } from '../../common/config';
import { temporalConnectionOptions } from '../../common/temporal/connection-options';
import { createLogger } from '../../common/logger';
import { platformDataConverter } from '../../common/temporal/data-converter';
import { installWorkerRuntime } from '../../workers/temporal/runtime';
import { bundleWorkflows, createDomainWorker } from '../../workers/temporal/worker';

/**
 * The Worker of bench/money-flows.bench.ts's Temporal ceiling, as a child process like the money Worker:
 * bench/money/noop.workflow.ts and a `noop` local activity on the task queue given as the first
 * argument, assembled as workers/main.ts assembles a domain's Worker. Logs `noop worker running`.
 */
async function main(): Promise<void> {
  const taskQueue = process.argv[2];
  if (!taskQueue) throw new Error('usage: noop-worker.ts <task queue>');
  const cfg = config();
  const logger = createLogger('noop-worker', cfg.logLevel);
  installWorkerRuntime(logger);
  const connection = await NativeConnection.connect(temporalConnectionOptions(cfg.temporal));
  const worker = await createDomainWorker({
    connection,
    namespace: cfg.temporal.namespace,
    taskQueue,
    workflowBundle: await bundleWorkflows(require.resolve('./noop.workflow')),
    activities: { noop: () => Promise.resolve('done') },
    dataConverter: await platformDataConverter(cfg.temporalCodec),
  });
  process.once('SIGTERM', () => worker.shutdown());
  const running = worker.run();
  logger.info({ taskQueue }, 'noop worker running');
  try {
    await running;
  } finally {
    await connection.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
