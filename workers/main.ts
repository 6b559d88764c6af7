import { Client } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { config } from '../common/config';
import { createKafka, ReconnectingProducer } from '../common/kafka';
import { createLogger } from '../common/logger';
import { createObjectStore } from '../common/object-store';
import { createPlatformGroups } from './consumers/platform-groups';
import { webhookTaskQueues } from '../services/events/webhooks/deps';
import { StagedObjectConsumer } from '../services/files/staged-objects';
import { Mailer } from '../services/notify/mailer';
import { createSmtpSender } from '../services/notify/smtp';
import { contextBoundLogger } from '../common/temporal/activity-context';
import { clientInterceptors } from '../common/temporal/client-interceptors';
import { temporalConnectionOptions } from '../common/temporal/connection-options';
import { platformDataConverter } from '../common/temporal/data-converter';
import { taskQueues, type Domain } from '../common/temporal/task-queues';
import { createDbPool } from '../db/pool';
import { TenantReader } from '../db/tenant-reads';
import { ensureSchedules } from './schedules';
import { installWorkerRuntime } from './temporal/runtime';
import { bundleWorkflows, createDomainWorker } from './temporal/worker';

/**
 * The Temporal worker process: one Worker per domain that has activities (activities/index.ts),
 * all on one connection and one workflow bundle, then the platform's Schedules. SIGTERM or SIGINT
 * stops polling, lets in-flight tasks finish, and only then closes the database pool.
 */
async function main(): Promise<void> {
  const cfg = config();
  const logger = createLogger('worker', cfg.logLevel);
  // First thing: the SDK's runtime (its log lines, its Prometheus metrics) must exist before any connection.
  installWorkerRuntime(logger, { metricsPort: cfg.workerMetrics.port });

  // Activities work for one tenant on the application role, under row-level security like the
  // gateway; only the Schedules' fleet-wide sweeps get the owner role, on a small pool of their own.
  const appPool = await createDbPool(cfg.db.url, { name: 'worker-app', maxPoolSize: cfg.db.poolSize });
  const fleetPool = await createDbPool(cfg.db.ownerUrl, { name: 'worker-fleet', maxPoolSize: 2 });
  const connection = await NativeConnection.connect(temporalConnectionOptions(cfg.temporal));
  const workflowBundle = await bundleWorkflows();
  // Every payload the workers and the Schedules client write is encrypted (common/temporal/payload-codec.ts).
  const dataConverter = await platformDataConverter(cfg.temporalCodec);
  const smtp = createSmtpSender(cfg.mail);
  // Dead letters' replay-all re-publishes through it; closed after the Workers stopped.
  const eventsProducer = new ReconnectingProducer(createKafka(cfg.kafka, logger));
  const activitiesByDomain = createActivities({
    appPool, fleetPool, logger: contextBoundLogger(logger), objectStore: createObjectStore(cfg.s3), smtp,
    billingLimits: cfg.billingLimits, clamav: cfg.clamav, eventsProducer,
  });

  const workers: Worker[] = [];
  for (const [domain, activities] of Object.entries(activitiesByDomain)) {
    const taskQueue = taskQueues[domain as Domain];
    workers.push(await createDomainWorker({ connection, namespace: cfg.temporal.namespace, taskQueue, workflowBundle, activities, dataConverter }));
    logger.info({ taskQueue }, 'worker created');
  }

  // The gateway's interceptors: what the staged-object consumer starts carries its tenant and kind too.
  const client = new Client({ connection, namespace: cfg.temporal.namespace, dataConverter, interceptors: clientInterceptors });
  await ensureSchedules(client, cfg);
  logger.info({ ui: cfg.temporal.uiUrl }, 'schedules ensured');

  // Presigned uploads' PUTs, noticed through the object store's notifications (services/files/staged-objects.ts).
  const stagedObjects = cfg.files.storeEventsTopic ? new StagedObjectConsumer({
    kafka: createKafka(cfg.kafka, logger), temporal: client, appPool, objectStore: createObjectStore(cfg.s3),
    topic: cfg.files.storeEventsTopic, groupId: 'files.staged-objects', logger,
  }) : undefined;

  // The platform's own consumer groups (the modules' event subscribers, services/events/consumers/,
  // and the webhook dispatchers).
  // Which tenants of a batch have a subscriber's module: one pipelined round trip for all (db/tenant-reads.ts).
  const reads = await TenantReader.open(cfg.db.url, appPool, 2);
  // The webhook dispatchers start deliveries through the same client (services/events/webhooks/dispatcher.ts).
  // The security mail goes out through the sendEmail workflow like every mail (services/notify/mailer.ts).
  const platformGroups = createPlatformGroups(cfg, {
    kafka: createKafka(cfg.kafka, logger), db: appPool, reads, logger, webhooks: { temporal: client, taskQueues: webhookTaskQueues(cfg) },
    securityMail: new Mailer(() => ({ client }), cfg.mail.taskQueue, cfg.api.downstreamTimeoutMs, logger),
  });

  // One failed Worker stops the others too: a process that serves only some of its task queues
  // looks healthy while work piles up, so it exits and its supervisor restarts it whole.
  const shutdown = (reason: string) => {
    logger.info({ reason }, 'shutting down: finishing in-flight tasks');
    for (const worker of workers) {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    }
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  // Like a failed Worker: without it presigned uploads would wait for a PUT nobody notices, until they expire.
  stagedObjects?.start().catch((err: unknown) => {
    logger.error({ err }, 'staged object consumer failed');
    process.exitCode = 1;
    shutdown('staged object consumer failed');
  });

  // Likewise: events the modules subscribe to would pile up unhandled.
  const groupsFailed = (err: unknown, group?: string) => {
    logger.error({ err, group }, 'platform consumer groups failed');
    process.exitCode = 1;
    shutdown('platform consumer groups failed');
  };
  platformGroups.start().then(() => logger.info({ groups: [...platformGroups.consumers.keys()] }, 'platform consumer groups running'), groupsFailed);
  void platformGroups.failed().then(({ group, error }) => groupsFailed(error, group));

  const runs = await Promise.allSettled(workers.map((worker) => worker.run().catch((err: unknown) => {
    logger.error({ err, taskQueue: worker.options.taskQueue }, 'worker failed');
    shutdown('worker failed');
    throw err;
  })));
  await stagedObjects?.stop();
  await platformGroups.stop();
  await eventsProducer.reset();
  await connection.close();
  smtp.close();
  await Promise.all([appPool.end(), fleetPool.end(), reads.end()]);
  logger.info('worker stopped');
  if (runs.some((run) => run.status === 'rejected')) process.exitCode = 1;
}

main().catch((err: unknown) => {
  // The logger may not exist yet (a configuration error), so the last word goes to stderr.
  console.error(err);
  process.exit(1);
});
