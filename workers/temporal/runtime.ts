import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../../common/logger';

const pinoLevel: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error',
};

export interface WorkerRuntimeOptions {
  /** The port of the SDK's Prometheus endpoint (config.workerMetrics.port); undefined serves none. */
  metricsPort?: number;
}

/**
 * The Temporal SDK's process-wide runtime as a worker process runs it. Runtime.install may be called
 * once per process and before the first connection is made, so the logger and the metrics are set
 * up together here, first thing.
 *
 * Logs: the SDK's own lines (worker state, workflow and activity logs with their workflowId,
 * activityId and our context attributes) go to the process's pino logger, so a worker writes one
 * JSON log stream.
 *
 * Metrics: the SDK's core serves its worker metrics (task slots available and used per slot type,
 * schedule-to-start latencies, the sticky cache, polls) on http://127.0.0.1:<port>/metrics. The
 * prefix is the SDK's own `temporal_`, stated here so it does not change under us: Temporal's
 * published SDK dashboards and alerts expect exactly those names.
 */
export function installWorkerRuntime(logger: Logger, { metricsPort }: WorkerRuntimeOptions = {}): void {
  const temporalLogger = logger.child({ component: 'temporal' });
  Runtime.install({
    logger: new DefaultLogger('INFO', ({ level, message, meta }) => temporalLogger[pinoLevel[level]](meta ?? {}, message)),
    telemetryOptions: {
      // The Rust core's own warnings (connection trouble, server capabilities) join the same stream.
      logging: { filter: { core: 'WARN', other: 'WARN' }, forward: {} },
      ...(metricsPort !== undefined && {
        metrics: { metricPrefix: 'temporal_', prometheus: { bindAddress: `127.0.0.1:${metricsPort}` } },
      }),
    },
    // workers/main.ts drains the workers itself on SIGTERM/SIGINT and then closes the database pool.
    shutdownSignals: [],
  });
  if (metricsPort !== undefined) temporalLogger.info({ metrics: `http://127.0.0.1:${metricsPort}/metrics` }, 'serving the Temporal SDK metrics');
}
