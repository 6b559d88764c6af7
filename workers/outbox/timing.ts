import { setTimeout as sleep } from 'node:timers/promises';

/** Bounded exponential backoff: attempt 1 waits initialMs, each further attempt twice as long, never more than maxMs. */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt - 1));
}

/** Waits `ms`, or less when the signal aborts (shutdown must not sit out a 30 s backoff). */
export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  await sleep(ms, undefined, { signal }).catch((error: unknown) => {
    if (!signal.aborted) throw error;
  });
}
