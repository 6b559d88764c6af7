import { problems } from '../../../common/problems';
import { SUBSCRIPTION_STATUSES, type SubscriptionStatus } from '../../../db/queries/billing/subscriptions.queries';
import {
  advance, INVALID_TRANSITION, transition, type InvalidTransition, type SubscriptionEvent,
} from '../../../workflows/billing/subscription-transitions';

/**
 * The moves of docs/reference/billing.md#rule-4 and #rule-26, one row each (the first move,
 * (none) → trialing at tenant creation (rule 3), is the registration's insert: test/api/identity/register.test.ts).
 */
type Row = [from: SubscriptionStatus, event: SubscriptionEvent, to: SubscriptionStatus | InvalidTransition];

const document1: Array<[trigger: string, ...Row]> = [
  ['payment collected', 'trialing', 'payment_succeeded', 'active'],
  ['trial end, no payment method', 'trialing', 'trial_ended_unpaid', 'past_due'],
  ['payment failed', 'active', 'payment_failed', 'past_due'],
  ['7 days unpaid', 'past_due', 'dunning_suspended', 'suspended'],
  ['30 more days unpaid (day 38 onward)', 'suspended', 'dunning_terminated', 'terminated'],
  ['payment received (past_due)', 'past_due', 'payment_succeeded', 'active'],
  ['payment received (suspended)', 'suspended', 'payment_succeeded', 'active'],
  ['any move to active is rejected', 'terminated', 'payment_succeeded', INVALID_TRANSITION],
  ['provider cancels (trialing)', 'trialing', 'provider_canceled', 'canceled'],
  ['provider cancels (active)', 'active', 'provider_canceled', 'canceled'],
  ['provider cancels (past_due)', 'past_due', 'provider_canceled', 'canceled'],
  ['provider cancels (suspended)', 'suspended', 'provider_canceled', 'canceled'],
];

/** The moves the rest of docs/reference/billing.md implies (plan changes, cancellation, renewal, recovery). */
const implied: Array<[why: string, ...Row]> = [
  ['a payment renews an active subscription', 'active', 'payment_succeeded', 'active'],
  ['a payment after a cancellation subscribes again', 'canceled', 'payment_succeeded', 'active'],
  ['a failed payment during the trial starts dunning', 'trialing', 'payment_failed', 'past_due'],
  ['a trial on a free plan has nothing to collect', 'trialing', 'trial_ended', 'active'],
  ['a paid period ends and the next begins', 'active', 'period_renewed', 'active'],
  ['cancelAtPeriodEnd takes effect when the trial ends', 'trialing', 'canceled_at_period_end', 'canceled'],
  ['cancelAtPeriodEnd takes effect when the period ends', 'active', 'canceled_at_period_end', 'canceled'],
  ['a downgrade over its limits after 30 days (trialing)', 'trialing', 'downgrade_over_limits', 'past_due'],
  ['a downgrade over its limits after 30 days (active)', 'active', 'downgrade_over_limits', 'past_due'],
  ['termination day before the suspension day (configuration)', 'past_due', 'dunning_terminated', 'terminated'],
  ['a cancellation waits for the end of the trial', 'trialing', 'cancel_requested', 'trialing'],
  ['a cancellation waits for the end of the paid period', 'active', 'cancel_requested', 'active'],
  ['nothing paid is running: canceled at once (past_due)', 'past_due', 'cancel_requested', 'canceled'],
  ['nothing paid is running: canceled at once (suspended)', 'suspended', 'cancel_requested', 'canceled'],
  ['a plan change keeps the status (trialing)', 'trialing', 'plan_change_requested', 'trialing'],
  ['a plan change keeps the status (active)', 'active', 'plan_change_requested', 'active'],
  ['a plan change keeps the status (past_due)', 'past_due', 'plan_change_requested', 'past_due'],
  ['a plan change keeps the status (suspended)', 'suspended', 'plan_change_requested', 'suspended'],
  ['the Platform Owner recovers a terminated tenant', 'terminated', 'tenant_recovered', 'suspended'],
];

const EVENTS: SubscriptionEvent[] = [
  'payment_succeeded', 'payment_failed', 'trial_ended', 'trial_ended_unpaid', 'period_renewed', 'canceled_at_period_end',
  'downgrade_over_limits', 'dunning_suspended', 'dunning_terminated', 'provider_canceled', 'cancel_requested',
  'plan_change_requested', 'tenant_recovered',
];

const legal = [...document1, ...implied].filter(([, , , to]) => to !== INVALID_TRANSITION);
const illegal: Row[] = SUBSCRIPTION_STATUSES.flatMap((from) => EVENTS
  .filter((event) => !legal.some(([, f, e]) => f === from && e === event))
  .map((event): Row => [from, event, INVALID_TRANSITION]));

describe('subscription transitions', () => {
  it.each(document1)('the life of a subscription: %s: %s + %s → %s', (_trigger, from, event, to) => {
    expect(transition(from, event)).toBe(to);
  });

  it.each(implied)('%s: %s + %s → %s', (_why, from, event, to) => {
    expect(transition(from, event)).toBe(to);
  });

  it.each(illegal)('%s + %s is an invalid-transition', (from, event) => {
    expect(transition(from, event)).toBe(INVALID_TRANSITION);
  });

  it('refuses every move out of terminated but the recovery, and every move out of canceled but a new payment', () => {
    expect(EVENTS.filter((event) => transition('terminated', event) !== INVALID_TRANSITION)).toEqual(['tenant_recovered']);
    expect(EVENTS.filter((event) => transition('canceled', event) !== INVALID_TRANSITION)).toEqual(['payment_succeeded']);
  });

  it('names the registry\'s 422 problem, which the gateway answers a refused Update with', () => {
    const problem = problems.invalidTransition('A terminated subscription cannot change plans');
    expect([problem.type, problem.status]).toEqual([INVALID_TRANSITION, 422]);
  });

  it('advance applies a legal move and throws on an illegal one (a workflow bug, never a status change)', () => {
    expect(advance('past_due', 'dunning_suspended')).toBe('suspended');
    expect(() => advance('active', 'dunning_suspended')).toThrow('no subscription transition from active on dunning_suspended');
  });
});
