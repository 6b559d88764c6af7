import type { SubscriptionStatus, UpdateRefusal } from './billing.messages';

/**
 * The subscription's states and transitions (docs/reference/billing.md#rule-4) as one table, kept
 * apart from the workflow so it can be read and tested on its own: no I/O, no workflow API, safe in
 * the sandbox. The first move ((none) → trialing when a tenant is created, docs/reference/billing.md#rule-3)
 * is the registration's insert (`insertTrialSubscription`); every other move is here.
 *
 * The workflow names each event by the reason it mirrors to PostgreSQL. The moves of
 * docs/reference/billing.md, rules 4 and 26:
 *   trialing  + payment collected                    → active     (payment_succeeded)
 *   trialing  + trial end, no payment                → past_due   (trial_ended_unpaid)
 *   active    + payment failed                       → past_due   (payment_failed)
 *   past_due  + 7 days unpaid                        → suspended  (dunning_suspended)
 *   suspended + 30 more days unpaid                  → terminated (dunning_terminated)
 *   past_due or suspended + payment received         → active     (payment_succeeded)
 *   terminated + any move to active                  → rejected, `invalid-transition`
 *   any + the provider's cancellation                → canceled   (provider_canceled)
 * and the moves the rest of docs/reference/billing.md implies: a failed payment or a downgrade still
 * over its limits after the grace period starts dunning from trialing too; a trial on a free plan and an active
 * period's end renew; a cancellation takes effect at the end of the trial or paid period, at once
 * when nothing paid is running; a plan change is refused once canceled or terminated; the Platform
 * Owner's recovery of a terminated tenant (docs/reference/billing.md#rule-29) makes it suspended again.
 */
export type SubscriptionEvent =
  | 'payment_succeeded' | 'payment_failed' | 'trial_ended' | 'trial_ended_unpaid' | 'period_renewed'
  | 'canceled_at_period_end' | 'downgrade_over_limits' | 'dunning_suspended' | 'dunning_terminated'
  | 'provider_canceled' | 'cancel_requested' | 'plan_change_requested' | 'tenant_recovered';

/** The problem suffix (422) of a move the table does not allow. */
export const INVALID_TRANSITION = 'invalid-transition' satisfies UpdateRefusal;
export type InvalidTransition = typeof INVALID_TRANSITION;

type Moves = Partial<Record<SubscriptionStatus, SubscriptionStatus>>;

/** From → to, per event; a status absent from an event's row cannot take that event. */
const MOVES: Record<SubscriptionEvent, Moves> = {
  // A payment on a canceled subscription subscribes again; an active one's renewal stays active.
  payment_succeeded: { trialing: 'active', active: 'active', past_due: 'active', suspended: 'active', canceled: 'active' },
  payment_failed: { trialing: 'past_due', active: 'past_due' },
  // A trial on a free plan has nothing to collect.
  trial_ended: { trialing: 'active' },
  trial_ended_unpaid: { trialing: 'past_due' },
  period_renewed: { active: 'active' },
  canceled_at_period_end: { trialing: 'canceled', active: 'canceled' },
  downgrade_over_limits: { trialing: 'past_due', active: 'past_due' },
  dunning_suspended: { past_due: 'suspended' },
  // From past_due only when the configured suspension day comes after the termination day.
  dunning_terminated: { past_due: 'terminated', suspended: 'terminated' },
  // Terminated stays terminated: only the Platform Owner's recovery leaves it.
  provider_canceled: { trialing: 'canceled', active: 'canceled', past_due: 'canceled', suspended: 'canceled' },
  // Trialing and active run to the end of their period (cancelAtPeriodEnd); unpaid ones cancel at once.
  cancel_requested: { trialing: 'trialing', active: 'active', past_due: 'canceled', suspended: 'canceled' },
  plan_change_requested: { trialing: 'trialing', active: 'active', past_due: 'past_due', suspended: 'suspended' },
  tenant_recovered: { terminated: 'suspended' },
};

/** Where `event` takes a subscription in status `from`, or `invalid-transition` when the table has no such move. */
export function transition(from: SubscriptionStatus, event: SubscriptionEvent): SubscriptionStatus | InvalidTransition {
  return MOVES[event][from] ?? INVALID_TRANSITION;
}

/**
 * The move of an event the workflow only arms in the statuses it leaves (a timer): an illegal one is a
 * bug, so it fails the workflow task (retried once the code is fixed) instead of changing the status.
 */
export function advance(from: SubscriptionStatus, event: SubscriptionEvent): SubscriptionStatus {
  const to = transition(from, event);
  if (to === INVALID_TRANSITION) throw new Error(`no subscription transition from ${from} on ${event}`);
  return to;
}
