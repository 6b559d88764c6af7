import { StepFailed, Unavailable } from './failures';
import { WAIT_MS } from './timeouts';

/**
 * Polls `probe` until it answers a value; else fails naming `what` and the last thing it saw. A
 * gateway or Mailpit that cannot be reached is polled again (a fault may be passing); an answer the
 * tour does not expect (a StepFailed of the probe) ends the step at once.
 */
export async function waitUntil<T>(
  what: string, probe: () => Promise<[T | undefined, string]> | [T | undefined, string], timeoutMs = WAIT_MS, everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let last: string;
    try {
      const [value, seen] = await probe();
      if (value !== undefined) return value;
      last = seen;
    } catch (error) {
      if (error instanceof StepFailed && !(error instanceof Unavailable)) throw error;
      last = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() >= deadline) throw new StepFailed(`${what} did not happen within ${timeoutMs} ms; last seen: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
