import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../activities';
import { config } from '../common/config';
import { temporalConnectionOptions } from '../common/temporal/connection-options';
import { newId } from '../common/ids';
import { createLogger } from '../common/logger';
import { createObjectStore } from '../common/object-store';
import { registerSearchAttributes } from '../common/temporal/register-search-attributes';
import { createSmtpSender } from '../services/notify/smtp';
import { createDbPool } from '../db/pool';
import { installWorkerRuntime } from '../workers/temporal/runtime';
import { bundleWorkflows, createDomainWorker, workflowsPath } from '../workers/temporal/worker';

const usage = `Records the history of one workflow run for the replay tests (docs/decisions/testing.md: record before changing).

  npm run build && node dist/scripts/record-history.js <workflowType> <out.json> [--args '<JSON array>'] [--workflows <path>]

Runs the workflow to its end (completed or failed) on the local Temporal dev server, with the real activities and
database, on a task queue of its own, and writes its history as JSON (the form the Temporal CLI
and UI export). Save it under test/replay/histories/<workflowType>/. --workflows bundles another
workflows module instead of the platform's (how test/replay/broken/ was recorded). --time-skipping
runs it on Temporal's time-skipping test server instead, for workflows that sleep for days.`;

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      args: { type: 'string', default: '[]' }, workflows: { type: 'string' }, help: { type: 'boolean' },
      'time-skipping': { type: 'boolean' },
    },
  });
  const [workflowType, out] = positionals;
  if (values.help || !workflowType || !out) {
    console.log(usage);
    process.exitCode = values.help ? 0 : 2;
    return;
  }
  const args: unknown = JSON.parse(values.args);
  if (!Array.isArray(args)) throw new Error('--args must be a JSON array of the workflow\'s arguments');

  const cfg = config();
  const logger = createLogger('record-history', cfg.logLevel);
  installWorkerRuntime(logger);
  const appPool = await createDbPool(cfg.db.url, { name: 'record-history-app', maxPoolSize: 2 });
  const fleetPool = await createDbPool(cfg.db.ownerUrl, { name: 'record-history-fleet', maxPoolSize: 2 });
  const testServer = values['time-skipping']
    ? await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: cfg.temporal.testServerPath } } })
    : undefined;
  // Child workflows carry the platform's search attributes (workflows/interceptors.ts): the test server must know them.
  if (testServer) await registerSearchAttributes(testServer.connection, testServer.namespace ?? 'default');
  const connection = testServer?.nativeConnection ?? await NativeConnection.connect(temporalConnectionOptions(cfg.temporal));
  const smtp = createSmtpSender(cfg.mail);
  try {
    const taskQueue = `record-history.${newId()}`;
    const worker = await createDomainWorker({
      connection,
      namespace: cfg.temporal.namespace,
      taskQueue,
      workflowBundle: await bundleWorkflows(values.workflows ? resolve(values.workflows) : workflowsPath),
      // Every domain's activities on the one queue: the recorded run may call any of them.
      activities: Object.fromEntries(Object.values(createActivities({ appPool, fleetPool, logger, objectStore: createObjectStore(cfg.s3), smtp }))
        .flatMap((domain) => Object.entries(domain))),
      // No encryption: a committed history must replay anywhere, without this machine's payload key.
      dataConverter: {},
    });
    const client = testServer?.client ?? new Client({ connection, namespace: cfg.temporal.namespace });
    const history = await worker.runUntil(async () => {
      const handle = await client.workflow.start(workflowType, { taskQueue, workflowId: `record-history.${workflowType}.${newId()}`, args });
      // A run that fails is recorded as it ended too: the replay tests keep such histories (the
      // money workflows' refusals before they completed with them, docs/decisions/testing.md).
      await handle.result().catch((err: unknown) => logger.warn({ err }, 'the workflow failed; its history is recorded'));
      return handle.fetchHistory();
    });
    mkdirSync(dirname(resolve(out)), { recursive: true });
    writeFileSync(resolve(out), `${historyToJSON(history)}\n`);
    logger.info({ out, events: history.events?.length }, 'history recorded');
  } finally {
    if (testServer) await testServer.teardown();
    else await connection.close();
    smtp.close();
    await Promise.all([appPool.end(), fleetPool.end()]);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
