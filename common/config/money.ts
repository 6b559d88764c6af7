import Joi from 'joi';
import { taskQueues } from '../temporal/task-queues';
import { setting } from './setting';

/** Money (docs/reference/money.md#limits). */
export const moneySettings = {
  money: {
    reversalMaxAgeDays: setting('MONEY_REVERSAL_MAX_AGE_DAYS', Joi.number().integer().min(1).max(3650).default(365)),
    planLimitsCacheMs: setting('MONEY_PLAN_LIMITS_CACHE_SECONDS', Joi.number().integer().min(0).max(86_400).default(300), (seconds) => seconds * 1000),
  },
  /**
   * Workflow-backed money (holds, transfers): the task queue the gateway starts them on (tests point
   * it at their own worker), a hold's default TTL, open holds per wallet, and the safety-net sweep of
   * holds whose own timer did not expire them.
   */
  moneyFlows: {
    taskQueue: setting('MONEY_TASK_QUEUE', Joi.string().default(taskQueues.money)),
    holdTtlHours: setting('MONEY_HOLD_TTL_HOURS', Joi.number().integer().min(1).max(168).default(72)),
    maxHoldsPerWallet: setting('MONEY_MAX_HOLDS_PER_WALLET', Joi.number().integer().min(1).default(100)),
    holdCleanupIntervalSec: setting('MONEY_HOLD_CLEANUP_INTERVAL_SEC', Joi.number().integer().min(1).default(60)),
    /**
     * Admission (issue 19): holds, transfers, confirms and cancels one tenant may have in flight at
     * once, counted in Redis across gateways; beyond it 429 rate-limit-exceeded before any workflow
     * starts. 8 because more buys a tenant no throughput here and costs every other tenant latency
     * (measured with the overload fault test: docs/decisions/money.md, Overload).
     */
    maxInFlightPerTenant: setting('MONEY_MAX_IN_FLIGHT_PER_TENANT', Joi.number().integer().min(1).default(8)),
    /**
     * How long an admitted request's slot counts at most: a gateway that crashed never releases its
     * slots, so they lapse. Longer than a healthy operation can take (4 local-activity attempts of
     * at most 10 s each).
     */
    admissionLeaseMs: setting('MONEY_ADMISSION_LEASE_SECONDS', Joi.number().integer().min(1).max(3600).default(60), (seconds) => seconds * 1000),
  },
};
