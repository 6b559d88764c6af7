import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  DefaultLogger, NativeConnection, Runtime, type Worker, type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { connectTemporal } from '../../common/temporal/client';
import { config } from '../../common/config';
import { temporalConnectionOptions } from '../../common/temporal/connection-options';
import { newId } from '../../common/ids';
import { clientInterceptors } from '../../common/temporal/client-interceptors';
import { platformDataConverter } from '../../common/temporal/data-converter';
import { registerSearchAttributes } from '../../common/temporal/register-search-attributes';
import { bundleWorkflows, createDomainWorker } from '../../workers/temporal/worker';

// The SDK logs every worker state change at INFO; a test's output should show only what went wrong.
// Installed when a test file loads this helper, before anything creates the default runtime. The
// time-skipping server lacks capabilities newer servers advertise, and the Rust core warns about that
// once per worker, which says nothing about the test.
Runtime.install({
  logger: new DefaultLogger('WARN'),
  telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'WARN' } } },
  shutdownSignals: [],
});

/**
 * Workflow tests run under Temporal's time-skipping test server (the Java one, via the wrapper the
 * bring-up scripts build at config.temporal.testServerPath): timers of days complete in seconds.
 * Each test file starts its own server (time skipping is global to a server, so files must not share
 * one) with the platform's client interceptors installed, as the gateway's client has them.
 *
 * The SDK gives the server 5 s to start. Measured here with the wrapper's class-data sharing: 0.4 to
 * 0.9 s alone, about 1 s with four starting at once and 1.7 s with eight on two cores, so the SDK
 * starts it itself and no pre-started server is needed.
 *
 * Every start carries the platform's search attributes (common/temporal/search-attributes.ts), which
 * the test server refuses until they are registered, so each new server gets them first.
 */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: config().temporal.testServerPath } },
    client: { interceptors: clientInterceptors, dataConverter: await platformDataConverter(config().temporalCodec) },
  });
  return withSearchAttributes(env);
}

/** A test server with the platform's search attributes registered in its namespace; torn down if that fails. */
export async function withSearchAttributes(env: TestWorkflowEnvironment): Promise<TestWorkflowEnvironment> {
  try {
    await registerSearchAttributes(env.connection, env.namespace ?? 'default');
  } catch (error) {
    await env.teardown();
    throw error;
  }
  return env;
}

/** A task queue no other test or worker polls. */
export function uniqueTaskQueue(name: string): string {
  return `test.${name}.${newId()}`;
}

/**
 * Terminates what still runs on a test's own task queue once the test is over (a subscription's
 * lifecycle, a scan nobody polls for): no worker will poll that queue again, and on a machine that
 * keeps its Temporal database between runs every run would leave them behind. As far as visibility
 * lists them: a workflow started a moment before may not be listed yet, and is left.
 */
export async function terminateRunningOn(client: Client, taskQueue: string): Promise<void> {
  for await (const { workflowId, runId } of client.workflow.list({ query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'` })) {
    await client.workflow.getHandle(workflowId, runId).terminate('the test that started it is over; no worker polls its task queue again')
      .catch((error: unknown) => {
        if (!(error instanceof WorkflowNotFoundError)) throw error; // ended meanwhile
      });
  }
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** The production workflow bundle, built once per test file (webpack takes a second or two). */
export function platformBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflows();
  return bundle;
}

export interface TestWorkerOptions {
  taskQueue: string;
  activities: object;
  /** Defaults to the production bundle; tests of the interceptors bundle their own probe workflows. */
  workflowBundle?: WorkflowBundleWithSourceMap;
}

/** Where a test worker polls: the time-skipping environment or the real dev server. */
export interface WorkerTarget {
  nativeConnection: NativeConnection;
  namespace?: string;
}

/** A Worker assembled exactly as workers/main.ts assembles one. */
export async function createTestWorker(target: WorkerTarget, options: TestWorkerOptions): Promise<Worker> {
  return createDomainWorker({
    connection: target.nativeConnection,
    namespace: target.namespace ?? 'default',
    taskQueue: options.taskQueue,
    workflowBundle: options.workflowBundle ?? await platformBundle(),
    activities: options.activities,
    dataConverter: await platformDataConverter(config().temporalCodec),
  });
}

export interface DevServer extends WorkerTarget {
  /** The gateway's client (common/temporal/client.ts), interceptors included. */
  client: Client;
  close(): Promise<void>;
}

/**
 * The real Temporal dev server of the local services (config.temporal.address), for what the
 * time-skipping server does not do faithfully: Schedules, signal headers, the UI. The bring-up
 * registers the platform's search attributes there; making sure costs one call, and a server started
 * some other way then works too.
 */
export async function connectDevServer(): Promise<DevServer> {
  const cfg = config().temporal;
  const [{ connection, client }, nativeConnection] = await Promise.all([
    connectTemporal(cfg, config().temporalCodec),
    NativeConnection.connect(temporalConnectionOptions(cfg)),
  ]);
  await registerSearchAttributes(connection, cfg.namespace);
  return {
    client,
    nativeConnection,
    namespace: cfg.namespace,
    close: async () => {
      await connection.close();
      await nativeConnection.close();
    },
  };
}
