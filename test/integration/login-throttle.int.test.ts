import { createHash } from 'node:crypto';
import { LoginThrottle } from '../../services/identity/login-throttle';
import { config } from '../../common/config';
import { createLogger } from '../../common/logger';
import { newId } from '../../common/ids';
import { isProblem } from '../../common/problems';
import { createRedis, type Redis } from '../../common/redis';

/**
 * The login throttle against the real Redis: per account and per IP, doubling waits, reset by a
 * success (account) and bounded by the window. Each test uses its own account and IP.
 */
let redis: Redis;
const logger = createLogger('throttle-test', 'silent');
const settings = { windowSeconds: 60, accountAttempts: 2, ipAttempts: 3, maxDelaySeconds: 4 };

beforeAll(() => { redis = createRedis(config().redis); });
afterAll(() => redis.quit());

const account = () => `${newId()}@example.test`;
const ip = () => `test-${newId()}`;

async function retryAfter(throttle: LoginThrottle, email: string, address: string): Promise<number | null> {
  try {
    await throttle.assertAllowed(email, address);
    return null;
  } catch (error) {
    if (!isProblem(error)) throw error;
    return error.extensions.retryAfter as number;
  }
}

/**
 * The check right after a wait of `seconds` was set (at or after `setAt`): Retry-After is Redis's
 * remaining time rounded up, so between 1 and `seconds`. No wait at all only once the whole wait had
 * passed by the check's answer, which a busy machine can make happen to a 1 s wait.
 */
async function expectWaiting(throttle: LoginThrottle, email: string, address: string, seconds: number, setAt: number): Promise<void> {
  const wait = await retryAfter(throttle, email, address);
  if (wait === null) {
    expect(Date.now() - setAt).toBeGreaterThanOrEqual(seconds * 1000);
  } else {
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(seconds);
  }
}

/** The waits (EX seconds) recordFailure set on the given scope's keys, in order. */
function waitsSet(sets: jest.SpyInstance, scope: 'account' | 'ip'): number[] {
  return (sets.mock.calls as unknown[][])
    .filter(([key]) => String(key).startsWith(`auth:login:${scope}:`) && String(key).endsWith(':wait'))
    .map((call) => Number(call[3]));
}

describe('login throttle', () => {
  it('lets the free attempts through, then waits 1, 2, 4 s, capped at the maximum', async () => {
    const throttle = new LoginThrottle(redis, settings, logger);
    const [email, address] = [account(), ip()];
    const sets = jest.spyOn(redis, 'set');
    try {
      // The longest wait of the account (2 free attempts) and the IP (3) after each failure.
      const longest = [null, null, 1, 2, 4, 4];
      for (const seconds of longest) {
        const setAt = Date.now();
        await throttle.recordFailure(email, address);
        if (seconds === null) expect(await retryAfter(throttle, email, address)).toBeNull();
        else await expectWaiting(throttle, email, address, seconds, setAt);
      }
      expect(waitsSet(sets, 'account')).toEqual([1, 2, 4, 4]);
      expect(waitsSet(sets, 'ip')).toEqual([1, 2, 4]);
    } finally {
      sets.mockRestore();
    }
  });

  it('slows an IP across accounts', async () => {
    const throttle = new LoginThrottle(redis, settings, logger);
    const address = ip();
    for (let failure = 0; failure < 3; failure += 1) await throttle.recordFailure(account(), address);
    expect(await retryAfter(throttle, account(), address)).toBeNull();
    const setAt = Date.now();
    await throttle.recordFailure(account(), address);
    await expectWaiting(throttle, account(), address, 1, setAt);
    expect(await retryAfter(throttle, account(), ip())).toBeNull();
  });

  it('clears the account on a successful login', async () => {
    const throttle = new LoginThrottle(redis, settings, logger);
    const [email, address] = [account(), ip()];
    for (let failure = 0; failure < 3; failure += 1) await throttle.recordFailure(email, address);
    await throttle.recordSuccess(email);
    expect(await retryAfter(throttle, email, ip())).toBeNull();
  });

  it('reports the account\'s count with the check, and a success clears what the check saw', async () => {
    const throttle = new LoginThrottle(redis, settings, logger);
    const [email, address] = [account(), ip()];
    expect(await throttle.assertAllowed(email, address)).toEqual({ accountFailures: false });
    await throttle.recordFailure(email, address);
    const check = await throttle.assertAllowed(email, address);
    expect(check).toEqual({ accountFailures: true });
    await throttle.recordSuccess(email, check);
    expect(await throttle.assertAllowed(email, ip())).toEqual({ accountFailures: false });
  });

  it('leaves a failure counted after a check that saw none (only ever slower, never faster)', async () => {
    const throttle = new LoginThrottle(redis, settings, logger);
    const [email, address] = [account(), ip()];
    const check = await throttle.assertAllowed(email, address);
    for (let failure = 0; failure < 2; failure += 1) await throttle.recordFailure(email, ip());
    const setAt = Date.now();
    await throttle.recordFailure(email, ip());
    await throttle.recordSuccess(email, check);
    await expectWaiting(throttle, email, ip(), 1, setAt);
    // The count itself (it lives for the window, not for the wait) is still there.
    const accountKey = `auth:login:account:${createHash('sha256').update(email.toLowerCase()).digest('base64url')}`;
    expect(await redis.get(`${accountKey}:failures`)).toBe('3');
  });

  it('keeps no count beyond the window', async () => {
    const throttle = new LoginThrottle(redis, settings, logger);
    const address = ip();
    await throttle.recordFailure(account(), address);
    await throttle.recordFailure(account(), address);
    const ttl = await redis.ttl(`auth:login:ip:${address}:failures`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(settings.windowSeconds);
  });

  it('lets logins through when Redis is unreachable', async () => {
    const offline = createRedis({ url: 'redis://127.0.0.1:1' }, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const throttle = new LoginThrottle(offline, settings, logger);
    await throttle.recordFailure(account(), ip());
    expect(await retryAfter(throttle, account(), ip())).toBeNull();
    offline.disconnect();
  });
});
