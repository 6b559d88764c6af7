import { backoffDelay, pause } from '../../../workers/outbox/timing';

describe('relay backoff while Kafka is unavailable', () => {
  it.each([
    [1, 250],
    [2, 500],
    [3, 1000],
    [7, 16_000],
    [8, 30_000],
    [50, 30_000],
    [5000, 30_000],
  ])('attempt %i waits %i ms (250 ms doubling, at most 30 s)', (attempt, delay) => {
    expect(backoffDelay(attempt, 250, 30_000)).toBe(delay);
  });
});

describe('pause', () => {
  it('returns at once when shutdown was already asked for', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(pause(60_000, controller.signal)).resolves.toBeUndefined();
  });

  it('returns early when shutdown is asked for during the wait', async () => {
    const controller = new AbortController();
    const waiting = pause(60_000, controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeUndefined();
  });
});
