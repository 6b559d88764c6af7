import {
  bundleWorkflowCode, DefaultLogger, Runtime, Worker,
  type NativeConnection, type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { setFlagsFromString } from 'node:v8';
import { contextActivityInterceptors } from '../../common/temporal/activity-context';
import { clientInterceptors } from '../../common/temporal/client-interceptors';

/** The one workflows entry and the workflow interceptor modules compiled into every bundle. */
export const workflowsPath = require.resolve('../../workflows');
export const workflowInterceptorModules = [require.resolve('../../workflows/interceptors')];

/**
 * Bundles the workflows once per process: every domain's Worker and the replay tests share the
 * bundle instead of each Worker running webpack again. `path` is for recording histories of a
 * variant of the workflows (scripts/record-history.ts).
 */
export function bundleWorkflows(path = workflowsPath): Promise<WorkflowBundleWithSourceMap> {
  // webpack's module listing comes at INFO; only its warnings and errors are worth a log line.
  const logger = new DefaultLogger('WARN', ({ level, message, meta }) => { Runtime.instance().logger.log(level, message, meta); });
  return bundleWorkflowCode({ workflowsPath: path, workflowInterceptorModules, logger });
}

export interface DomainWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  workflowBundle: WorkflowBundleWithSourceMap;
  activities: object;
  /** platformDataConverter (the encrypting codec) everywhere except where a plain history is wanted on purpose. */
  dataConverter: DataConverter;
}

/**
 * The old generation may double before V8 collects it in full (its limit becomes twice what survived
 * the last full collection), in every isolate of the process: the main thread and the workflow
 * threads. V8 otherwise chose a limit a few MB above the worker's 70–80 MB of live heap, and so ran a
 * full mark-compact every half second while files were scanned (each costing 50–150 ms of CPU with
 * its concurrent marking; --trace-gc-nvp); doubling cut the worker's CPU per upload by about a
 * third, at no measurable cost in resident memory (docs/decisions/platform.md, The worker's heap).
 * A flag V8 reads at every full collection, so setting it here holds however the process was
 * started (NODE_OPTIONS refuses it).
 */
function letTheHeapDouble(): void {
  setFlagsFromString('--heap-growing-percent=100');
}

/** A Worker as the platform runs it: the shared bundle, the domain's activities, context propagation, its heap's growth. */
export function createDomainWorker({ connection, namespace, taskQueue, workflowBundle, activities, dataConverter }: DomainWorkerOptions): Promise<Worker> {
  letTheHeapDouble();
  return Worker.create({
    connection,
    namespace,
    taskQueue,
    workflowBundle,
    activities,
    dataConverter,
    // client: the Client activities reach through their Context (the webhook redelivery signals with
    // it) starts workflows with the platform's search attributes, as the gateway's does.
    interceptors: { activity: [contextActivityInterceptors], client: clientInterceptors },
    // In-flight activities get this long to finish on shutdown before they are cancelled.
    shutdownGraceTime: '30 seconds',
  });
}
