export class TimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * Settles with `work` or rejects after `ms`, whichever comes first. The work itself is not
 * cancelled (callers that can cancel, like Temporal's withDeadline, do so themselves); the timer
 * is cleared either way so nothing lingers.
 */
export async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(what, ms)), ms);
  });
  try {
    return await Promise.race([work, expiry]);
  } finally {
    clearTimeout(timer);
  }
}
