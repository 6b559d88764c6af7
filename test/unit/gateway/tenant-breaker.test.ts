import { TenantBreakers } from '../../../api/resilience/tenant-breaker';

describe('TenantBreakers', () => {
  let now = 0;
  const breakers = () => new TenantBreakers({ errorRate: 0.5, windowMs: 60_000, minRequests: 10, openMs: 30_000, now: () => now });

  beforeEach(() => { now = 1_000_000; });

  it('isolates a tenant whose error rate exceeds 50 % over the window, and only that tenant', () => {
    const tenants = breakers();
    for (let i = 0; i < 5; i += 1) tenants.record('a', false);
    for (let i = 0; i < 5; i += 1) tenants.record('a', true);
    expect(tenants.isIsolated('a')).toBe(false); // exactly 50 % is not over 50 %
    tenants.record('a', true);
    expect(tenants.isIsolated('a')).toBe(true);
    expect(tenants.isIsolated('b')).toBe(false);
    expect(tenants.isolatedCount()).toBe(1);
  });

  it('does not judge a tenant below the minimum number of requests', () => {
    const tenants = breakers();
    for (let i = 0; i < 9; i += 1) tenants.record('a', true);
    expect(tenants.isIsolated('a')).toBe(false);
  });

  it('forgets failures older than the window and lets the tenant back after the open period', () => {
    const tenants = breakers();
    for (let i = 0; i < 9; i += 1) tenants.record('a', true);
    now += 61_000;
    for (let i = 0; i < 9; i += 1) tenants.record('a', false);
    tenants.record('a', true);
    expect(tenants.isIsolated('a')).toBe(false);

    for (let i = 0; i < 20; i += 1) tenants.record('b', true);
    expect(tenants.isIsolated('b')).toBe(true);
    now += 30_000;
    expect(tenants.isIsolated('b')).toBe(false);
    expect(tenants.isolatedCount()).toBe(0);
  });

  it('sweeps the counts of idle tenants', () => {
    const tenants = breakers();
    tenants.record('a', true);
    now += 61_000;
    tenants.sweep();
    for (let i = 0; i < 9; i += 1) tenants.record('a', true);
    expect(tenants.isIsolated('a')).toBe(false); // 9 in the new window: the old failure is gone
  });
});
