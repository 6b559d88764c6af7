import { Redis } from 'ioredis';
import { LoginThrottle } from '../../services/identity/login-throttle';
import { config } from '../../common/config';
import { createLogger } from '../../common/logger';
import { newId } from '../../common/ids';
import { isProblem } from '../../common/problems';

/**
 * The login throttle against the real Redis: per account and per IP, doubling waits, reset by a
 * success (account) and bounded by the window. Each test uses its own account and IP.
 */
let redis: Redis;
const logger = createLogger('throttle-test', 'silent');
const settings = { windowSeconds: 60, accountAttempts: 2, ipAttempts: 3, maxDelaySeconds: 4 };

beforeAll(() => { redis = new Redis(config().redis.url); });
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

describe('login throttle', () => {
  it('lets the free attempts through, then waits 1, 2, 4 s, capped at the maximum', async () => {
    const throttle = new LoginThrottle(redis, settings, logger);
    const [email, address] = [account(), ip()];
    const waits: (number | null)[] = [];
    for (let failure = 0; failure < 6; failure += 1) {
      await throttle.recordFailure(email, address);
      waits.push(await retryAfter(throttle, email, address));
    }
    expect(waits).toEqual([null, null, 1, 2, 4, 4]);
  });

  it('slows an IP across accounts', async () => {
    const throttle = new LoginThrottle(redis, settings, logger);
    const address = ip();
    for (let failure = 0; failure < 4; failure += 1) await throttle.recordFailure(account(), address);
    expect(await retryAfter(throttle, account(), address)).toBe(1);
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
    for (let failure = 0; failure < 3; failure += 1) await throttle.recordFailure(email, ip());
    await throttle.recordSuccess(email, check);
    expect(await retryAfter(throttle, email, ip())).toBe(1);
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
    const offline = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const throttle = new LoginThrottle(offline, settings, logger);
    await throttle.recordFailure(account(), ip());
    expect(await retryAfter(throttle, account(), ip())).toBeNull();
    offline.disconnect();
  });
});
