import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection, type WorkflowStartOptions } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Workflow, WorkflowResultType } from '@temporalio/common';
import { NativeConnection, type Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { config } from '../../common/config';
import { temporalConnectionOptions } from '../../common/temporal/connection-options';
import { registerSearchAttributes } from '../../common/temporal/register-search-attributes';
import { createDbPool, type DatabasePool } from '../../db/pool';
import { createDomainWorker } from '../../workers/temporal/worker';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';
import { startFilesWorkflowStack, type FilesWorkflowStack } from '../helpers/files-workflows';
import { platformBundle, withSearchAttributes, type DevServer, type WorkerTarget } from '../helpers/temporal';

/**
 * What the test/replay/record-*-histories.ts scripts share. Payloads are recorded without the codec, as
 * scripts/record-history.ts does: a committed history must replay on any machine, without this
 * machine's payload key; so the servers here are reached with the SDK's default data converter.
 */

/** The time-skipping server, its client without the platform's codec and interceptors. */
export async function createPlainTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  return withSearchAttributes(await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: config().temporal.testServerPath } },
  }));
}

/** The dev server of the local services (config.temporal.address), its client without the codec. */
export async function connectPlainDevServer(): Promise<DevServer> {
  const { namespace } = config().temporal;
  const options = temporalConnectionOptions(config().temporal);
  const [connection, nativeConnection] = await Promise.all([Connection.connect(options), NativeConnection.connect(options)]);
  await registerSearchAttributes(connection, namespace);
  return {
    client: new Client({ connection, namespace }),
    nativeConnection,
    namespace,
    async close() {
      await connection.close();
      await nativeConnection.close();
    },
  };
}

/**
 * A worker of `taskQueue` on `target`, as the platform assembles one but without the codec. Its bundle
 * is the platform's unless `workflowBundle` adds stand-ins for workflows the recorded one talks to
 * (its recorded commands are the same: the recorded workflow's own code is the platform's).
 */
export async function createRecordingWorker(
  target: WorkerTarget, taskQueue: string, activities: object, workflowBundle?: WorkflowBundleWithSourceMap,
): Promise<Worker> {
  return createDomainWorker({
    connection: target.nativeConnection, namespace: target.namespace ?? 'default', taskQueue,
    workflowBundle: workflowBundle ?? await platformBundle(), dataConverter: {}, activities,
  });
}

/**
 * Runs `workflow` to its end on a worker that is running and prints its result (what the recorded run
 * did); answers the run to write as `name`, and the result.
 */
export async function executeRecordedRun<W extends Workflow>(
  client: Client, name: string, workflow: W, options: WorkflowStartOptions<W>,
): Promise<{ run: [name: string, workflowId: string]; result: WorkflowResultType<W> }> {
  const result = await client.workflow.execute(workflow, options);
  console.log(name, JSON.stringify(result));
  return { run: [name, options.workflowId], result };
}

/** Writes the history of each recorded run to test/replay/histories/<workflowType>/<name>.json. */
export async function writeHistories(
  client: Client, workflowType: string, runs: Iterable<[name: string, workflowId: string, runId?: string]>,
): Promise<void> {
  const out = join(__dirname, 'histories', workflowType);
  mkdirSync(out, { recursive: true });
  for (const [name, workflowId, runId] of runs) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    writeFileSync(join(out, `${name}.json`), `${historyToJSON(history)}\n`);
    console.log(`${workflowType}/${name}`, history.events?.length, 'events');
  }
}

/**
 * Runs a script's `main`; a failure is printed and ends the process with 1, so that a recording that
 * went wrong is never taken for one that went right.
 */
export function runScript(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}

/**
 * Runs a files recorder: the files stack `name` (helpers/files-workflows: the pools, a bucket of its
 * own, a seeded tenant) on the server `connect` reaches, `record` with it, then the stack closed.
 */
export function recordFilesHistories<T extends TestWorkflowEnvironment | DevServer>(
  name: string, connect: () => Promise<T>, record: (stack: FilesWorkflowStack<T>) => Promise<void>,
): void {
  runScript(async () => {
    const stack = await startFilesWorkflowStack(name, connect);
    try {
      await record(stack);
    } finally {
      await stack.close();
    }
  });
}

/** What a recorder runs against when its workflow needs neither a bucket nor the files stack's tenant. */
export interface RecordingStack {
  /** The time-skipping server (createPlainTimeSkippingEnv). */
  env: TestWorkflowEnvironment;
  /** PostgreSQL as the owner (the recorder's seeding, the fleet-wide queries) and as the application role. */
  owner: DatabasePool;
  app: DatabasePool;
}

/**
 * Runs a recorder: once the database is migrated and the workflow bundle built, a time-skipping server
 * and the pools `name` and `name`-app, `record` with them, then all closed.
 */
export function recordHistories(name: string, record: (stack: RecordingStack) => Promise<void>): void {
  runScript(async () => {
    await Promise.all([migrateSharedDatabase(), platformBundle()]);
    const env = await createPlainTimeSkippingEnv();
    const owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name });
    const app = await createDbPool(appUrl(), { maxPoolSize: 2, name: `${name}-app` });
    try {
      await record({ env, owner, app });
    } finally {
      await env.teardown();
      await Promise.all([owner.end(), app.end()]);
    }
  });
}
