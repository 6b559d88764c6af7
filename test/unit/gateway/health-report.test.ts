import { flagCacheStatus, proxyStatus } from '../../../api/health/components';
import { EventLoopMonitor } from '../../../api/health/event-loop';
import { formatUptime, HTTP_STATUS, overallStatus } from '../../../api/health/report';
import { CircuitBreakers } from '../../../api/resilience/circuit-breaker';

describe('health roll-up', () => {
  it.each([
    [['healthy', 'healthy'], 'healthy', 200],
    [['healthy', 'degraded'], 'degraded', 207],
    [['degraded', 'unhealthy', 'healthy'], 'unhealthy', 503],
  ] as const)('%j is %s (HTTP %i)', (statuses, expected, http) => {
    expect(overallStatus(statuses)).toBe(expected);
    expect(HTTP_STATUS[expected]).toBe(http);
  });

  it.each([
    [0, '0s'], [59.9, '59s'], [60, '1m0s'], [3723, '1h2m3s'], [90_000, '25h0m0s'],
  ])('uptime %d s reads %s', (seconds, text) => {
    expect(formatUptime(seconds)).toBe(text);
  });
});

describe('proxy component (circuit breakers)', () => {
  const failing = () => Promise.reject(new Error('down'));

  async function open(breakers: CircuitBreakers, name: string) {
    for (let i = 0; i < 5; i += 1) await breakers.for(name).execute(failing).catch(() => undefined);
  }

  it('is healthy when every breaker is closed', async () => {
    const breakers = new CircuitBreakers();
    await breakers.for('redis').execute(async () => 'ok');
    expect(proxyStatus(breakers)).toEqual({ status: 'healthy', latencyMs: 0, error: null });
  });

  it('is degraded when some breakers are open', async () => {
    const breakers = new CircuitBreakers();
    await breakers.for('redis').execute(async () => 'ok');
    await open(breakers, 'kafka');
    expect(proxyStatus(breakers)).toEqual({ status: 'degraded', latencyMs: 0, error: 'circuits not closed: kafka (open)' });
  });

  it('is unhealthy when no breaker is closed', async () => {
    const breakers = new CircuitBreakers();
    await open(breakers, 'kafka');
    await open(breakers, 'redis');
    expect(proxyStatus(breakers).status).toBe('unhealthy');
  });
});

describe('event-loop liveness', () => {
  it('reports a blocked event loop as a process defect', async () => {
    // A limit no busy machine's scheduling reaches in the idle 50 ms below, and a block well past it.
    const limitMs = 2000;
    const monitor = new EventLoopMonitor(limitMs);
    monitor.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(monitor.liveness()).toEqual({ alive: true });
      // Monotonic time: a step of the wall clock cannot cut the block short.
      const until = performance.now() + limitMs + 500;
      while (performance.now() < until) { /* block the loop on purpose */ }
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(monitor.liveness()).toEqual({ alive: false, reason: expect.stringMatching(/^event loop blocked for \d+ ms \(limit 2000 ms\)$/) });
    } finally {
      monitor.stop();
    }
  });
  it('forgets the stalls of start-up once it ends, and reports the ones after it', async () => {
    const monitor = new EventLoopMonitor(250);
    monitor.start();
    const tick = () => new Promise((resolve) => setTimeout(resolve, 50));
    // A stall is measured from the histogram's previous sample: one tick of its timer before it.
    const block = async (ms: number) => {
      await tick();
      const until = Date.now() + ms;
      while (Date.now() < until) { /* block the loop on purpose */ }
      await tick();
    };
    try {
      await block(800);
      expect(monitor.liveness().alive).toBe(false);
      monitor.forgetStartup();
      expect(monitor.liveness()).toEqual({ alive: true });
      await block(800);
      expect(monitor.liveness().alive).toBe(false);
    } finally {
      monitor.stop();
    }
  });
});

describe('feature_flags component', () => {
  const now = 1_000_000;
  const refreshMs = 30_000;

  it('is unhealthy until the first load, with the reason it failed', () => {
    expect(flagCacheStatus({ loaded: false, refreshedAt: null, lastLoadMs: null, lastError: 'connection refused' }, refreshMs, now))
      .toEqual({ status: 'unhealthy', latencyMs: null, error: 'feature flags not loaded: connection refused' });
  });

  it('is healthy while refreshes keep succeeding', () => {
    expect(flagCacheStatus({ loaded: true, refreshedAt: now - refreshMs, lastLoadMs: 3, lastError: null }, refreshMs, now))
      .toEqual({ status: 'healthy', latencyMs: 3, error: null });
  });

  it('is degraded once three intervals pass without a good refresh', () => {
    const stale = flagCacheStatus({ loaded: true, refreshedAt: now - 3 * refreshMs - 1, lastLoadMs: 3, lastError: 'timeout' }, refreshMs, now);
    expect(stale).toEqual({ status: 'degraded', latencyMs: 3, error: 'feature flags last refreshed 90 s ago: timeout' });
  });
});
