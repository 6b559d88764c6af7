import { setTimeout as sleep } from 'node:timers/promises';

/** Deadlock and serialization failure: the transaction did nothing and may simply run again. */
const RETRYABLE_CODES = new Set(['40P01', '40001']);

/** The SQLSTATE of a driver error, looking through slonik's wrappers. */
export function sqlState(error: unknown): string | undefined {
  for (let current = error; current instanceof Error; current = current.cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/**
 * Runs a transaction again after a deadlock or serialization failure, 3 times at 100, 200 and
 * 400 ms; any other error, or the fourth failure, is thrown.
 */
export async function retryTransient<T>(work: () => Promise<T>, delaysMs: readonly number[] = [100, 200, 400]): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      const code = sqlState(error);
      if (attempt >= delaysMs.length || !code || !RETRYABLE_CODES.has(code)) throw error;
      await sleep(delaysMs[attempt]);
    }
  }
}
