import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../../common/logger';
import { problems } from '../../common/problems';

/**
 * One Lua script takes a slot or refuses: the tenant's held slots are a sorted set scored by when
 * each lease lapses (Redis's own clock, so gateways with drifting clocks agree). Lapsed leases are
 * dropped first, so the slots of a gateway that crashed before releasing them count only until
 * their lease ends; a plain counter would keep them for as long as the tenant stays busy.
 */
const ENTER = `
local limit = tonumber(ARGV[1])
local leaseMs = tonumber(ARGV[2])
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
if redis.call('ZCARD', KEYS[1]) >= limit then return 0 end
redis.call('ZADD', KEYS[1], nowMs + leaseMs, ARGV[3])
redis.call('PEXPIRE', KEYS[1], leaseMs)
return 1
`;

/**
 * Slots free as operations finish, usually within a second; a lease lapses only for a gateway that
 * crashed. So the refused client is told to come back in a second, not when the oldest lease ends.
 */
const RETRY_AFTER_SECONDS = 1;

type AdmissionRedis = Redis & {
  moneyAdmissionEnter(key: string, limit: number, leaseMs: number, slot: string): Promise<number>;
};

export interface MoneyAdmissionSettings {
  /** MONEY_MAX_IN_FLIGHT_PER_TENANT. */
  maxInFlightPerTenant: number;
  /** MONEY_ADMISSION_LEASE_SECONDS, in ms. */
  admissionLeaseMs: number;
}

/** Gives the slot back; called once the operation has settled, whatever the client was answered. */
export type LeaveAdmission = () => void;

/**
 * Admission of workflow-backed money requests (issue 19, docs/decisions/money.md "Overload"): a
 * tenant has at most MONEY_MAX_IN_FLIGHT_PER_TENANT holds, transfers, confirms and cancels in
 * flight, counted in Redis so the bound holds across every gateway. Past it the request is refused
 * at once (429 rate-limit-exceeded, Retry-After), before any workflow starts, so one tenant's
 * burst queues at its own door instead of in front of everyone's work in Temporal and PostgreSQL.
 *
 * If Redis cannot answer, the request is admitted (logged), as the rate limiter does: the bound
 * protects capacity, and refusing all money while the cache is down would turn a cache outage into
 * a money outage.
 */
export class MoneyAdmission {
  private readonly redis: AdmissionRedis;

  /** `onRefused` counts each refusal (the gateway's rate_limit_rejections_total, group money-in-flight). */
  constructor(
    redis: Redis, private readonly settings: MoneyAdmissionSettings, private readonly logger: Logger,
    private readonly onRefused: () => void = () => undefined,
  ) {
    redis.defineCommand('moneyAdmissionEnter', { numberOfKeys: 1, lua: ENTER });
    this.redis = redis as AdmissionRedis;
  }

  async enter(tenantId: string): Promise<LeaveAdmission> {
    const key = `money:in-flight:${tenantId}`;
    const slot = randomUUID();
    let admitted: number;
    try {
      admitted = await this.redis.moneyAdmissionEnter(key, this.settings.maxInFlightPerTenant, this.settings.admissionLeaseMs, slot);
    } catch (error) {
      this.logger.warn({ err: error, tenantId }, 'money admission unavailable; request admitted without a slot');
      return () => undefined;
    }
    if (admitted !== 1) {
      this.onRefused();
      throw problems.moneyInFlightLimit(this.settings.maxInFlightPerTenant, RETRY_AFTER_SECONDS);
    }
    return () => {
      // Not awaited: the command is queued on the connection before any later request's ENTER.
      this.redis.zrem(key, slot).catch((error: unknown) => {
        this.logger.warn({ err: error, tenantId }, 'money admission slot not released; it lapses with its lease');
      });
    };
  }
}
