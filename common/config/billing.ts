import Joi from 'joi';
import { taskQueues } from '../temporal/task-queues';
import { ConfigError, setting } from './setting';

/**
 * docs/reference/billing.md (rule 5, Limits): at least 5 notifications precede any soft delete, so the list must hold at least five
 * days before the termination day; a shorter list stops the process at start-up.
 */
function dunningNoticeDays(list: string, terminateAfterDays: number): number[] {
  const days = [...new Set(list.split(',').map(Number))].sort((a, b) => a - b);
  if (days.filter((day) => day < terminateAfterDays).length < 5) {
    throw new ConfigError('BILLING_DUNNING_NOTICE_DAYS must name at least 5 days before BILLING_TERMINATE_AFTER_DAYS');
  }
  return days;
}

const terminateAfterDays = setting('BILLING_TERMINATE_AFTER_DAYS', Joi.number().min(1).max(3650).default(38));

/** Subscriptions, webhooks and usage limits (docs/reference/billing.md). */
export const billingSettings = {
  billing: {
    stripeWebhookSecret: setting('BILLING_STRIPE_WEBHOOK_SECRET', Joi.string().default('whsec_local_stripe_secret')),
    paddleWebhookSecret: setting('BILLING_PADDLE_WEBHOOK_SECRET', Joi.string().default('pdl_local_paddle_secret')),
    trialDays: setting('BILLING_TRIAL_DAYS', Joi.number().integer().min(0).max(365).default(14)),
    /** Where the gateway starts and signals subscription workflows (tests point it at their worker). */
    taskQueue: setting('BILLING_TASK_QUEUE', Joi.string().default(taskQueues.billing)),
    /** The Stripe-Signature timestamp tolerance. */
    webhookToleranceSeconds: setting('BILLING_WEBHOOK_TOLERANCE_SECONDS', Joi.number().integer().min(1).max(86_400).default(300)),
    /**
     * How often the Schedule `billing.webhook-redelivery` delivers receipts the gateway did not hand to
     * their subscription workflow; it takes receipts at least this old (younger ones are still in flight).
     */
    webhookRedeliveryIntervalSec: setting('BILLING_WEBHOOK_REDELIVERY_INTERVAL_SEC', Joi.number().integer().min(1).max(3600).default(60)),
    /** The gateway's delivery after the answer: signals in flight at most, receipts waiting at most (more wait for the sweep). */
    webhookDispatch: {
      concurrency: setting('BILLING_WEBHOOK_DISPATCH_CONCURRENCY', Joi.number().integer().min(1).max(256).default(8)),
      queueLimit: setting('BILLING_WEBHOOK_DISPATCH_QUEUE', Joi.number().integer().min(0).max(1_000_000).default(10_000)),
    },
    /**
     * Durations of the subscription workflow (docs/reference/billing.md#rule-4), handed to it as its
     * input (workflows read no config). Days count from the event named.
     */
    lifecycle: {
      trialNoticeDays: setting('BILLING_TRIAL_NOTICE_DAYS', Joi.number().min(0).max(365).default(3)),
      suspendAfterDays: setting('BILLING_SUSPEND_AFTER_DAYS', Joi.number().min(0).max(365).default(7)),
      terminateAfterDays,
      downgradeGraceDays: setting('BILLING_DOWNGRADE_GRACE_DAYS', Joi.number().min(0).max(365).default(30)),
      /** Dunning e-mails, in days after the subscription went past_due; at least 5 before termination. */
      dunningNoticeDays: setting('BILLING_DUNNING_NOTICE_DAYS', Joi.string().pattern(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/).default('0,3,7,14,30,37'),
        (list, lookup) => dunningNoticeDays(list, lookup(terminateAfterDays))),
    },
  },
  /**
   * Usage limits (issue 5, part 2): enabled false skips every limit check (billing not deployed);
   * how long the gateway reuses a tenant's plan and status (docs/reference/billing.md#rule-13: 15 minutes); the termination's
   * minimum hours per deleting phase (each of its two takes at least this long, so the whole runs 24
   * to 48 hours) and its rows or objects per batch.
   */
  billingLimits: {
    enabled: setting('BILLING_ENABLED', Joi.boolean().default(true)),
    cacheTtlMs: setting('BILLING_CACHE_TTL', Joi.number().integer().min(0).max(86_400).default(900), (seconds) => seconds * 1000),
    terminationPhaseHours: setting('BILLING_TERMINATION_PHASE_HOURS', Joi.number().min(0).max(24).default(12)),
    terminationBatchSize: setting('BILLING_TERMINATION_BATCH_SIZE', Joi.number().integer().min(1).max(10_000).default(500)),
  },
};
