import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * One JSON logger per process. Every line of a request carries its traceId (bound by the
 * request-context middleware), so a trace id from a problem response finds its log lines.
 *
 * Lines go to stdout asynchronously (sonic-boom, no minimum length): an idle process writes each
 * line at once, a busy one writes the lines that queued up behind a write in flight together, instead
 * of one blocking write per request (the largest single cost in the gateway's CPU profile). pino
 * flushes the queue when the process exits, on signals and on an uncaught exception too.
 */
export function createLogger(name: string, level = 'info'): Logger {
  return pino({
    name,
    level,
    base: { service: name, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token'], censor: '[redacted]' },
  }, pino.destination({ sync: false }));
}
