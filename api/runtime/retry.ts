import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../common/logger';

export interface RetryOptions {
  logger: Logger;
  /** Aborted at shutdown: the loop stops between attempts. */
  signal: AbortSignal;
  initialDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Runs a start-up task until it succeeds, with a doubling delay up to a cap. The gateway starts
 * listening before its dependencies are reachable (so /live answers and /ready says what is
 * missing) and keeps trying in the background instead of exiting. Resolves true once the task
 * succeeded, false if the signal stopped it first.
 */
export async function retryUntilDone(what: string, task: () => Promise<void>, options: RetryOptions): Promise<boolean> {
  const { logger, signal, initialDelayMs = 250, maxDelayMs = 5000 } = options;
  let delayMs = initialDelayMs;
  for (let attempt = 1; !signal.aborted; attempt += 1) {
    try {
      await task();
      logger.info({ attempt }, `${what}: done`);
      return true;
    } catch (error) {
      logger.warn({ attempt, err: error, retryInMs: delayMs }, `${what}: failed, retrying`);
    }
    try {
      await sleep(delayMs, undefined, { signal });
    } catch {
      break; // aborted while waiting
    }
    delayMs = Math.min(delayMs * 2, maxDelayMs);
  }
  return false;
}
