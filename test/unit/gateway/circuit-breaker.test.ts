import { CircuitBreaker, CircuitBreakers, CircuitOpenError } from '../../../api/resilience/circuit-breaker';

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => { now += ms; } };
}

const fail = () => Promise.reject(new Error('downstream failed'));
const succeed = () => Promise.resolve('ok');

async function failTimes(breaker: CircuitBreaker, times: number, clock?: ReturnType<typeof manualClock>, gapMs = 0) {
  for (let i = 0; i < times; i += 1) {
    await expect(breaker.execute(fail)).rejects.toThrow('downstream failed');
    clock?.advance(gapMs);
  }
}

describe('circuit breaker state machine', () => {
  it('stays closed below five consecutive failures', async () => {
    const breaker = new CircuitBreaker('svc', { now: manualClock().now });
    await failTimes(breaker, 4);
    expect(breaker.state).toBe('closed');
  });

  it('opens after five consecutive failures within 30 s and refuses calls without making them', async () => {
    const clock = manualClock();
    const breaker = new CircuitBreaker('svc', { now: clock.now });
    await failTimes(breaker, 5, clock, 5_000);
    expect(breaker.state).toBe('open');
    const call = jest.fn(succeed);
    await expect(breaker.execute(call)).rejects.toBeInstanceOf(CircuitOpenError);
    expect(call).not.toHaveBeenCalled();
  });

  it('does not count failures older than the 30 s window', async () => {
    const clock = manualClock();
    const breaker = new CircuitBreaker('svc', { now: clock.now });
    await failTimes(breaker, 5, clock, 10_000); // the first ones fall out of the window
    expect(breaker.state).toBe('closed');
  });

  it('a success resets the run of failures', async () => {
    const breaker = new CircuitBreaker('svc', { now: manualClock().now });
    await failTimes(breaker, 4);
    await breaker.execute(succeed);
    await failTimes(breaker, 4);
    expect(breaker.state).toBe('closed');
  });

  it('turns half-open after 30 s and closes when the probe succeeds', async () => {
    const clock = manualClock();
    const breaker = new CircuitBreaker('svc', { now: clock.now });
    await failTimes(breaker, 5);
    clock.advance(29_999);
    expect(breaker.state).toBe('open');
    clock.advance(1);
    expect(breaker.state).toBe('half-open');
    await expect(breaker.execute(succeed)).resolves.toBe('ok');
    expect(breaker.state).toBe('closed');
  });

  it('opens again for another 30 s when the probe fails', async () => {
    const clock = manualClock();
    const breaker = new CircuitBreaker('svc', { now: clock.now });
    await failTimes(breaker, 5);
    clock.advance(30_000);
    await expect(breaker.execute(fail)).rejects.toThrow('downstream failed');
    expect(breaker.state).toBe('open');
    clock.advance(29_999);
    expect(breaker.state).toBe('open');
    clock.advance(1);
    expect(breaker.state).toBe('half-open');
  });

  it('lets exactly one probe through while half-open', async () => {
    const clock = manualClock();
    const breaker = new CircuitBreaker('svc', { now: clock.now });
    await failTimes(breaker, 5);
    clock.advance(30_000);
    let finishProbe: (value: string) => void = () => undefined;
    const probe = breaker.execute(() => new Promise<string>((resolve) => { finishProbe = resolve; }));
    await expect(breaker.execute(succeed)).rejects.toBeInstanceOf(CircuitOpenError);
    finishProbe('probe ok');
    await expect(probe).resolves.toBe('probe ok');
    expect(breaker.state).toBe('closed');
  });

  it('neither counts nor clears a failure its caller says tells nothing of the downstream (a tenant\'s passed deadline)', async () => {
    const clock = manualClock();
    const breaker = new CircuitBreaker('svc', { now: clock.now });
    const neutral = () => false;
    await failTimes(breaker, 4);
    for (let i = 0; i < 20; i += 1) await expect(breaker.execute(fail, neutral)).rejects.toThrow('downstream failed');
    expect(breaker.state).toBe('closed');
    // The run of four counted failures goes on: neutral ones did not end it.
    await failTimes(breaker, 1);
    expect(breaker.state).toBe('open');
    // A probe that meets a neutral failure leaves the circuit half-open for the next probe.
    clock.advance(30_000);
    await expect(breaker.execute(fail, neutral)).rejects.toThrow('downstream failed');
    expect(breaker.state).toBe('half-open');
    await expect(breaker.execute(succeed)).resolves.toBe('ok');
    expect(breaker.state).toBe('closed');
  });

  it('keeps one breaker per downstream and reports their states', async () => {
    const clock = manualClock();
    const breakers = new CircuitBreakers({ now: clock.now });
    await failTimes(breakers.for('kafka'), 5);
    await breakers.for('redis').execute(succeed);
    expect(breakers.for('kafka')).toBe(breakers.for('kafka'));
    expect(breakers.states()).toEqual({ kafka: 'open', redis: 'closed' });
  });
});
