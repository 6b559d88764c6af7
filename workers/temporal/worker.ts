import {
  bundleWorkflowCode, DefaultLogger, Runtime, Worker,
  type NativeConnection, type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { contextActivityInterceptors } from '../../common/temporal/activity-context';

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

/** A Worker as the platform runs it: the shared bundle, the domain's activities, context propagation. */
export function createDomainWorker({ connection, namespace, taskQueue, workflowBundle, activities, dataConverter }: DomainWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection,
    namespace,
    taskQueue,
    workflowBundle,
    activities,
    dataConverter,
    interceptors: { activity: [contextActivityInterceptors] },
    // In-flight activities get this long to finish on shutdown before they are cancelled.
    shutdownGraceTime: '30 seconds',
  });
}
