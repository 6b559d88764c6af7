import { PlanLimitReader, checkTransactionAmount, checkWalletBalance, type MoneyLimits } from '../../../services/money/plan-limits';
import type { WalletRow } from '../../../db/queries/money/wallets.queries';

/**
 * docs/reference/money.md#rule-12: plan limits cached 5 minutes per tenant; billing unavailable with nothing
 * cached → 503 billing-unavailable (fail closed); a stale cached value is used when present.
 */
const STARTER: MoneyLimits = { planId: 'starter', maxTxAmount: 10_000_000, maxBalance: 100_000_000 };
const TTL = 300_000;

function reader(load: (tenantId: string) => Promise<MoneyLimits>) {
  let now = 0;
  const calls: string[] = [];
  const instance = new PlanLimitReader(async (tenantId) => {
    calls.push(tenantId);
    return load(tenantId);
  }, { ttlMs: TTL, now: () => now });
  return { instance, calls, advance: (ms: number) => { now += ms; } };
}

describe('PlanLimitReader', () => {
  it('reads once per tenant within 5 minutes, again after', async () => {
    const { instance, calls, advance } = reader(async () => STARTER);
    await instance.limitsFor('t1');
    advance(TTL - 1);
    await instance.limitsFor('t1');
    expect(calls).toEqual(['t1']);
    advance(1);
    await instance.limitsFor('t1');
    await instance.limitsFor('t2');
    expect(calls).toEqual(['t1', 't1', 't2']);
  });

  it('shares one read between concurrent misses of a tenant', async () => {
    const { instance, calls } = reader(async () => STARTER);
    await Promise.all(Array.from({ length: 20 }, () => instance.limitsFor('t1')));
    expect(calls).toEqual(['t1']);
  });

  it('keeps no limits read before a plan change, and lets no read after it join the old one', async () => {
    const FREE: MoneyLimits = { planId: 'free', maxTxAmount: 1000, maxBalance: 10_000 };
    let plan = STARTER;
    let release = () => {};
    const { instance, calls } = reader(async () => {
      const read = plan;
      if (calls.length === 1) await new Promise<void>((resolve) => { release = resolve; });
      return read;
    });
    const before = instance.limitsFor('t1');
    plan = FREE;
    instance.invalidate('t1');
    const after = instance.limitsFor('t1');
    release();
    expect(await before).toEqual(STARTER);
    expect(await after).toEqual(FREE);
    expect(await instance.limitsFor('t1')).toEqual(FREE);
    expect(calls).toEqual(['t1', 't1']);
  });

  it('fails closed with 503 billing-unavailable when billing fails and nothing is cached', async () => {
    const { instance } = reader(async () => { throw new Error('billing down'); });
    await expect(instance.limitsFor('t1')).rejects.toMatchObject({ type: 'billing-unavailable', status: 503 });
  });

  it('uses the stale value when billing fails after the cache expired, and reads again next time', async () => {
    let up = true;
    const { instance, calls, advance } = reader(async () => {
      if (!up) throw new Error('billing down');
      return STARTER;
    });
    await instance.limitsFor('t1');
    up = false;
    advance(TTL * 10);
    await expect(instance.limitsFor('t1')).resolves.toEqual(STARTER);
    up = true;
    await instance.limitsFor('t1');
    expect(calls).toHaveLength(3);
  });
});

describe('limit checks', () => {
  const wallet = (available: number, frozen = 0) => ({ available, pending: 0, frozen } as WalletRow);
  const small: MoneyLimits = { planId: 'p', maxTxAmount: 100, maxBalance: 1000 };

  it.each([
    [100, null], [101, 'maxTxAmount'],
  ])('transaction amount %d → %s', (amount, refused) => {
    const check = () => checkTransactionAmount(small, amount);
    if (refused) expect(check).toThrow(expect.objectContaining({ type: 'plan-limit-exceeded', status: 402 }));
    else expect(check).not.toThrow();
  });

  it.each([
    [900, 0, 100, null], [900, 0, 101, 'maxBalance'], [800, 200, 1, 'maxBalance'],
  ])('balance %d (+%d frozen) receiving %d → %s', (available, frozen, incoming, refused) => {
    const check = () => checkWalletBalance(small, wallet(available, frozen), incoming);
    if (refused) expect(check).toThrow(expect.objectContaining({ type: 'plan-limit-exceeded', extensions: expect.objectContaining({ maxBalance: 1000 }) }));
    else expect(check).not.toThrow();
  });

  it('treats 0 as unlimited', () => {
    expect(() => checkTransactionAmount({ ...small, maxTxAmount: 0 }, 10 ** 12)).not.toThrow();
    expect(() => checkWalletBalance({ ...small, maxBalance: 0 }, wallet(10 ** 12), 1)).not.toThrow();
  });
});
