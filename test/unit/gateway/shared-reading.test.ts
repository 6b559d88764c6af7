import { SharedReading } from '../../../api/metrics/backlog-metrics';

/**
 * The reading behind the backlog gauges (api/metrics/backlog-metrics.ts): one database query per
 * cache period however many gauges and scrapers ask, a failure not retried sooner, and a scrape
 * that never waits longer than the timeout.
 */

/** A read whose answers the test releases one by one; `calls` counts the reads started. */
function controlledRead() {
  const pending: Array<{ resolve: (value: number) => void; reject: (err: Error) => void }> = [];
  const read = () => new Promise<number>((resolve, reject) => { pending.push({ resolve, reject }); });
  return {
    read,
    get calls() { return pending.length; },
    answer: (value: number) => pending.at(-1)!.resolve(value),
    fail: () => pending.at(-1)!.reject(new Error('statement timeout')),
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('SharedReading', () => {
  afterEach(() => jest.useRealTimers());

  it('serves every gauge of a scrape and every scrape within the cache period from one read', async () => {
    const source = controlledRead();
    const reading = new SharedReading(source.read, { cacheMs: 5000, timeoutMs: 1000 }, () => undefined);
    const gauges = [reading.current(), reading.current(), reading.current()];
    source.answer(7);
    expect((await Promise.all(gauges)).map((current) => current?.value)).toEqual([7, 7, 7]);
    expect((await reading.current())?.value).toBe(7);
    expect(source.calls).toBe(1);
  });

  it('reads again once the cache period has passed', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    const source = controlledRead();
    const reading = new SharedReading(source.read, { cacheMs: 5000, timeoutMs: 1000 }, () => undefined);
    const first = reading.current();
    source.answer(1);
    await first;
    jest.advanceTimersByTime(5000);
    const second = reading.current();
    source.answer(2);
    expect((await second)?.value).toBe(2);
    expect(source.calls).toBe(2);
  });

  it('keeps the last good value after a failure, reports it once, and does not retry within the cache period', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    const source = controlledRead();
    const failures: unknown[] = [];
    const reading = new SharedReading(source.read, { cacheMs: 5000, timeoutMs: 1000 }, (err) => failures.push(err));
    const first = reading.current();
    source.answer(3);
    const good = await first;
    jest.advanceTimersByTime(5000);
    const second = reading.current();
    source.fail();
    expect(await second).toEqual(good);
    expect(failures).toHaveLength(1);
    expect(await reading.current()).toEqual(good);
    expect(source.calls).toBe(2);
  });

  it('answers after the timeout with the last value while a read hangs, starts no second read meanwhile, and takes its late answer', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    const source = controlledRead();
    const reading = new SharedReading(source.read, { cacheMs: 0, timeoutMs: 1000 }, () => undefined);
    const before = reading.current();
    let answered = false;
    void before.then(() => { answered = true; });
    await flush();
    expect(answered).toBe(false);
    jest.advanceTimersByTime(1000);
    await flush();
    expect(answered).toBe(true);
    expect(await before).toBeUndefined();

    // Still hanging: the next scrape waits on the same read rather than starting another.
    const next = reading.current();
    jest.advanceTimersByTime(1000);
    expect(await next).toBeUndefined();
    expect(source.calls).toBe(1);

    source.answer(9);
    await flush();
    const late = reading.current();
    source.answer(10);
    expect((await late)?.value).toBe(10);
    expect(source.calls).toBe(2);
  });
});
