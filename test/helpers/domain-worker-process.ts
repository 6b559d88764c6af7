import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { config, type Config } from '../../common/config';
import { temporalConnectionOptions } from '../../common/temporal/connection-options';
import { createLogger, type Logger } from '../../common/logger';
import { createObjectStore } from '../../common/object-store';
import { contextBoundLogger } from '../../common/temporal/activity-context';
import { platformDataConverter } from '../../common/temporal/data-converter';
import { createDbPool } from '../../db/pool';
import { createSmtpSender } from '../../services/notify/smtp';
import { installWorkerRuntime } from '../../workers/temporal/runtime';
import { bundleWorkflows, createDomainWorker } from '../../workers/temporal/worker';

type Activities = Record<string, (...args: never[]) => Promise<unknown>>;

export interface DomainWorkerProcess {
  /** The domain: the process logs as `<domain>-worker` and says `<domain> worker running` once it polls. */
  domain: string;
  taskQueue: (cfg: Config) => string;
  /** The app role's pool size. */
  appPoolSize: (cfg: Config) => number;
  /** The activities this worker runs, picked from the platform's. */
  activities: (all: ReturnType<typeof createActivities>, logger: Logger) => Activities;
}

/**
 * One domain's Worker alone in a child process, assembled as workers/main.ts assembles it (the
 * crash tests SIGKILL it; benches run it): logs `<domain> worker running` once it polls, drains on SIGTERM.
 */
export function runDomainWorkerProcess(process_: DomainWorkerProcess): void {
  main(process_).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}

async function main({ domain, taskQueue: queueOf, appPoolSize, activities }: DomainWorkerProcess): Promise<void> {
  const name = `${domain}-worker`;
  const cfg = config();
  const logger = createLogger(name, cfg.logLevel);
  installWorkerRuntime(logger, { metricsPort: cfg.workerMetrics.port });

  const appPool = await createDbPool(cfg.db.url, { name: `${name}-app`, maxPoolSize: appPoolSize(cfg) });
  const fleetPool = await createDbPool(cfg.db.ownerUrl, { name: `${name}-fleet`, maxPoolSize: 1 });
  const connection = await NativeConnection.connect(temporalConnectionOptions(cfg.temporal));
  const smtp = createSmtpSender(cfg.mail);
  const all = createActivities({
    appPool, fleetPool, logger: contextBoundLogger(logger), objectStore: createObjectStore(cfg.s3), smtp, clamav: cfg.clamav,
  });
  const taskQueue = queueOf(cfg);
  const worker = await createDomainWorker({
    connection, namespace: cfg.temporal.namespace, taskQueue, workflowBundle: await bundleWorkflows(), activities: activities(all, logger),
    dataConverter: await platformDataConverter(cfg.temporalCodec),
  });
  process.once('SIGTERM', () => worker.shutdown());
  const running = worker.run();
  logger.info({ taskQueue }, `${domain} worker running`);
  try {
    await running;
  } finally {
    await connection.close();
    smtp.close();
    await Promise.all([appPool.end(), fleetPool.end()]);
  }
}
