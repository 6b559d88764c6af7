import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * One JSON logger per process. Every line of a request carries its traceId (bound by the
 * request-context middleware), so a trace id from a problem response finds its log lines.
 */
export function createLogger(name: string, level = 'info'): Logger {
  return pino({
    name,
    level,
    base: { service: name, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token'], censor: '[redacted]' },
  });
}
