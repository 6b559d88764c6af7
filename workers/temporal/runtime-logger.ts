import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../../common/logger';

const pinoLevel: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error',
};

/**
 * Sends the Temporal SDK's own log lines (worker state, workflow and activity logs with their
 * workflowId, activityId and our context attributes) to the process's pino logger, so a worker
 * writes one JSON log stream. Must run before the first connection is made.
 */
export function installRuntimeLogger(logger: Logger): void {
  const temporalLogger = logger.child({ component: 'temporal' });
  Runtime.install({
    logger: new DefaultLogger('INFO', ({ level, message, meta }) => temporalLogger[pinoLevel[level]](meta ?? {}, message)),
    // The Rust core's own warnings (connection trouble, server capabilities) join the same stream.
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'WARN' }, forward: {} } },
    // workers/main.ts drains the workers itself on SIGTERM/SIGINT and then closes the database pool.
    shutdownSignals: [],
  });
}
