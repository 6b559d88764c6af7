import {
  ActivityFailure, allHandlersFinished, condition, continueAsNew, log, proxyActivities, setHandler, upsertMemo, workflowInfo,
} from '@temporalio/workflow';
import type { BillingActivities, MirrorChange } from '../../activities/billing/subscription.activities';
import {
  cancelDowngradeUpdate, cancelSubscriptionUpdate, changePlanUpdate, providerEventSignal, selectPlanUpdate,
  subscriptionStateQuery, tenantRecoveredSignal, type CarriedState, type ChangePlanRequest, type ProviderEvent, type SubscriptionInput, type SubscriptionView,
} from './billing.messages';
import { addInterval } from './periods';
import { checkCancel, checkCancelDowngrade, checkChangePlan, checkSelectPlan } from './subscription-refusals';
import { advance, INVALID_TRANSITION, transition, type SubscriptionEvent } from './subscription-transitions';
import { canceledNotice, dunningNotice, terminatedNotice, trialEndingNotice, type Notice } from './notices';
import { startTermination } from './subscription-children';
import { mailNotice } from '../notify/mail-notice';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Provider event ids remembered across runs: enough for any redelivery burst, small enough to carry. */
const SEEN_EVENTS_KEPT = 50;

/** Database work of the mirror, the catalogue and the recipients: quick, retried while PostgreSQL is away. */
const billing = proxyActivities<BillingActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes', nonRetryableErrorTypes: ['not-found'] },
});

/**
 * The first load waits for the registration that started this workflow to commit (it is started
 * inside that transaction). A row that has not appeared after ten minutes belongs to a registration
 * that rolled back: the workflow ends, and nothing else ever refers to its tenant.
 */
const loader = proxyActivities<BillingActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

const iso = (ms: number): string => new Date(ms).toISOString();
const ms = (at: string): number => new Date(at).getTime();

/**
 * The subscription of one tenant (docs/reference/billing.md, Rules: the subscription; the table of
 * moves is ./subscription-transitions.ts), workflow id `subscription:<tenantId>`: trialing → active
 * on payment; past_due on a failed payment, on a trial ending unpaid or on a downgrade still over its
 * limits after the grace period; suspended after `suspendAfterDays` unpaid, terminated from
 * `terminateAfterDays` (starting the tenant's termination workflow), with the dunning notices in
 * between; a payment before termination makes it active with data untouched; the provider's
 * cancellation makes it canceled, where the workflow ends (a later payment starts a new one).
 * Webhooks arrive as the providerEvent signal, plan changes as Updates whose result the caller
 * answers with. Every change is mirrored to PostgreSQL by an activity, in version order; each
 * billing cycle continues as new, so a history holds one cycle.
 */
export async function subscriptionLifecycle(input: SubscriptionInput): Promise<SubscriptionView | null> {
  const { tenantId, settings } = input;
  const inbox: ProviderEvent[] = [];
  let recovered = false;
  /** Bumped by every handler that changes what the main loop waits for. */
  let wakes = 0;
  let cycleEnded = false;
  let state: CarriedState | undefined = input.carried;

  setHandler(providerEventSignal, (event) => {
    inbox.push(event);
  });
  setHandler(tenantRecoveredSignal, () => {
    recovered = true;
  });
  setHandler(subscriptionStateQuery, () => {
    if (!state) throw new Error('the subscription is still loading');
    return state;
  });

  const current = (): CarriedState => state!;
  const view = (): SubscriptionView => ({ ...current().subscription });

  // --- Mirror: every change is written in the order it was made ------------------------------------
  let mirrorTail: Promise<unknown> = Promise.resolve();
  type Before = MirrorChange['previous'];
  const before = (): Before => {
    const { status, planId, version } = current().subscription;
    return { status, planId, version };
  };
  function commit(previous: Before, reason: string, extra: Pick<MirrorChange, 'planChange' | 'note'> = {}): Promise<void> {
    const s = current().subscription;
    s.version = previous.version + 1;
    upsertMemo({ status: s.status, planId: s.planId, version: s.version });
    wakes += 1;
    const change: MirrorChange = { subscription: { ...s }, previous, reason, ...extra };
    const written = mirrorTail.then(() => billing.mirrorSubscription(change));
    mirrorTail = written.catch(() => undefined);
    return written.then(() => undefined);
  }

  /** A new billing cycle starts: a pending downgrade takes effect now. */
  function applyPendingChange(): MirrorChange['planChange'] {
    const s = current().subscription;
    if (!s.pendingChange) return undefined;
    const change = { kind: 'downgrade_applied' as const, fromPlanId: s.planId, toPlanId: s.pendingChange.planId, effectiveAt: iso(Date.now()) };
    s.planId = s.pendingChange.planId;
    s.pendingChange = null;
    return change;
  }

  function startDunning(event: SubscriptionEvent): void {
    current().subscription.status = advance(current().subscription.status, event);
    current().dunning = { since: iso(Date.now()), noticesSent: 0 };
  }

  // --- Notices to the tenant's owners, through the mail workflow -----------------------------------
  async function notify(notice: Notice): Promise<void> {
    // One mail per owner and notice: the key names the tenant and the occasion.
    await mailNotice(`billing:${tenantId}:${notice.key}`, await billing.ownerEmails(tenantId), settings.notifyTaskQueue, notice);
  }

  // --- Provider events (webhooks) ------------------------------------------------------------------
  async function activate(previous: Before, reason: string, periodStart: string, periodEnd: string | undefined): Promise<void> {
    const s = current().subscription;
    const planChange = applyPendingChange();
    const terms = await billing.planTerms(s.planId);
    s.status = advance(s.status, 'payment_succeeded');
    s.cancelAtPeriodEnd = false;
    s.currentPeriodStart = periodStart;
    s.currentPeriodEnd = periodEnd ?? addInterval(periodStart, terms.interval);
    current().dunning = null;
    cycleEnded = true;
    await commit(previous, reason, { planChange });
  }

  async function applyProviderEvent(event: ProviderEvent): Promise<void> {
    const seen = `${event.provider}:${event.eventId}`;
    if (current().seenEvents.includes(seen)) return;
    current().seenEvents = [...current().seenEvents, seen].slice(-SEEN_EVENTS_KEPT);
    const s = current().subscription;
    const previous = before();
    switch (event.kind) {
      case 'payment_succeeded':
        if (transition(s.status, 'payment_succeeded') === INVALID_TRANSITION) {
          // docs/reference/billing.md#rule-26: terminated → active is refused; the gateway answers 422 before signalling.
          log.warn('payment ignored: the subscription is terminated', { eventId: event.eventId });
          return;
        }
        if (s.status !== 'active') return activate(previous, 'payment_succeeded', iso(Date.now()), event.periodEnd);
        // A renewal the provider collected: the cycle moves on when the paid period reaches further.
        if (event.periodEnd && ms(event.periodEnd) > ms(s.currentPeriodEnd)) {
          return activate(previous, 'payment_succeeded', s.currentPeriodEnd, event.periodEnd);
        }
        return;
      case 'payment_failed':
        if (transition(s.status, 'payment_failed') === INVALID_TRANSITION) return;
        startDunning('payment_failed');
        return commit(previous, 'payment_failed');
      case 'canceled': {
        const to = transition(s.status, 'provider_canceled');
        if (to === INVALID_TRANSITION) return;
        s.status = to;
        s.pendingChange = null;
        current().dunning = null;
        current().downgradeCheck = null;
        await commit(previous, 'provider_canceled');
        return notify(canceledNotice(iso(Date.now())));
      }
      case 'updated':
        if (!event.planId || event.planId === s.planId || transition(s.status, 'plan_change_requested') === INVALID_TRANSITION) return;
        // The provider is authoritative for what is billed: its plan replaces ours and any pending change.
        s.planId = event.planId;
        s.pendingChange = null;
        current().downgradeCheck = null;
        return commit(previous, 'provider_updated', {
          planChange: { kind: 'provider_sync', fromPlanId: previous.planId, toPlanId: event.planId, effectiveAt: iso(Date.now()) },
        });
    }
  }

  // --- Timers of the current status ---------------------------------------------------------------
  interface Deadline { at: number; fire(): Promise<void> }

  async function endTrialOrPeriod(reason: 'trial_ended' | 'period_renewed'): Promise<void> {
    const s = current().subscription;
    const previous = before();
    cycleEnded = true;
    if (s.cancelAtPeriodEnd) {
      s.status = advance(s.status, 'canceled_at_period_end');
      s.pendingChange = null;
      current().downgradeCheck = null;
      await commit(previous, 'canceled_at_period_end');
      return notify(canceledNotice(s.currentPeriodEnd));
    }
    const planChange = applyPendingChange();
    const terms = await billing.planTerms(s.planId);
    if (reason === 'trial_ended' && terms.price > 0) {
      // docs/reference/billing.md#rule-4: a trial ending without payment goes past_due (the dunning notices follow).
      startDunning('trial_ended_unpaid');
      return commit(previous, 'trial_ended_unpaid', { planChange });
    }
    const start = reason === 'trial_ended' ? iso(Date.now()) : s.currentPeriodEnd;
    s.status = advance(s.status, reason);
    s.currentPeriodStart = start;
    s.currentPeriodEnd = addInterval(start, terms.interval);
    return commit(previous, reason, { planChange });
  }

  async function checkDowngrade(): Promise<void> {
    const check = current().downgradeCheck!;
    current().downgradeCheck = null;
    if (!(await billing.isOverPlanLimits(tenantId, check.planId))) return;
    const s = current().subscription;
    if (transition(s.status, 'downgrade_over_limits') === INVALID_TRANSITION) return;
    const previous = before();
    startDunning('downgrade_over_limits');
    return commit(previous, 'downgrade_over_limits');
  }

  async function terminate(): Promise<void> {
    const previous = before();
    current().subscription.status = advance(current().subscription.status, 'dunning_terminated');
    current().dunning = null;
    await commit(previous, 'dunning_terminated');
    await startTermination(tenantId);
    await notify(terminatedNotice(iso(Date.now())));
  }

  function deadlines(): Deadline[] {
    const { subscription: s, dunning, downgradeCheck } = current();
    const list: Deadline[] = [];
    if (s.status === 'trialing' && s.trialEndsAt) {
      const trialEndsAt = s.trialEndsAt;
      if (!current().trialNoticeSent) {
        list.push({
          at: ms(trialEndsAt) - settings.trialNoticeDays * DAY_MS,
          fire: async () => {
            await notify(trialEndingNotice(trialEndsAt));
            current().trialNoticeSent = true;
          },
        });
      }
      list.push({ at: ms(trialEndsAt), fire: () => endTrialOrPeriod('trial_ended') });
    }
    if (s.status === 'active') list.push({ at: ms(s.currentPeriodEnd), fire: () => endTrialOrPeriod('period_renewed') });
    if (downgradeCheck && (s.status === 'active' || s.status === 'trialing')) list.push({ at: ms(downgradeCheck.at), fire: checkDowngrade });
    if (dunning && (s.status === 'past_due' || s.status === 'suspended')) {
      const since = ms(dunning.since);
      // At the same instant the suspension comes first, so that day's notice says "suspended".
      if (s.status === 'past_due') {
        list.push({
          at: since + settings.suspendAfterDays * DAY_MS,
          fire: () => {
            const previous = before();
            current().subscription.status = advance(current().subscription.status, 'dunning_suspended');
            return commit(previous, 'dunning_suspended');
          },
        });
      }
      const noticeDay = settings.dunningNoticeDays[dunning.noticesSent];
      if (noticeDay !== undefined && noticeDay < settings.terminateAfterDays) {
        list.push({
          at: since + noticeDay * DAY_MS,
          fire: async () => {
            const terminatesAt = iso(since + settings.terminateAfterDays * DAY_MS);
            await notify(dunningNotice(dunning.since, noticeDay, current().subscription.status, terminatesAt));
            dunning.noticesSent += 1;
          },
        });
      }
      list.push({ at: since + settings.terminateAfterDays * DAY_MS, fire: terminate });
    }
    return list;
  }

  /** The earliest deadline; of equal ones the first listed. */
  function nextDeadline(): Deadline | undefined {
    return deadlines().reduce<Deadline | undefined>((next, d) => (!next || d.at < next.at ? d : next), undefined);
  }

  // --- Updates (PATCH, POST, DELETE, cancel-downgrade) ----------------------------------------------
  /** Updates that arrive while the first run is still loading wait for it. */
  const loaded = () => condition(() => state !== undefined);

  setHandler(changePlanUpdate, async (request) => {
    await loaded();
    checkChangePlan(current().subscription, request);
    const s = current().subscription;
    const previous = before();
    const now = iso(Date.now());
    if (request.kind === 'upgrade') {
      s.planId = request.planId;
      current().downgradeCheck = null;
      await commit(previous, 'plan_upgraded', { planChange: { kind: 'upgrade', fromPlanId: previous.planId, toPlanId: request.planId, effectiveAt: now } });
    } else {
      s.pendingChange = { planId: request.planId, kind: 'downgrade', requestedAt: now, effectiveAt: s.currentPeriodEnd };
      // The new plan's creation limits apply from now (docs/reference/billing.md#rule-8), so its grace period counts from now.
      current().downgradeCheck = { planId: request.planId, at: iso(Date.now() + settings.downgradeGraceDays * DAY_MS) };
      await commit(previous, 'downgrade_scheduled', {
        planChange: { kind: 'downgrade_scheduled', fromPlanId: previous.planId, toPlanId: request.planId, effectiveAt: s.currentPeriodEnd },
      });
    }
    return view();
  }, { validator: (request: ChangePlanRequest) => { if (state) checkChangePlan(state.subscription, request); } });

  setHandler(selectPlanUpdate, async ({ planId }) => {
    await loaded();
    checkSelectPlan(current().subscription, planId);
    const previous = before();
    current().subscription.planId = planId;
    current().downgradeCheck = null;
    await commit(previous, 'plan_selected', { planChange: { kind: 'selected', fromPlanId: previous.planId, toPlanId: planId, effectiveAt: iso(Date.now()) } });
    return view();
  }, { validator: ({ planId }: { planId: string }) => { if (state) checkSelectPlan(state.subscription, planId); } });

  setHandler(cancelDowngradeUpdate, async ({ reason }) => {
    await loaded();
    checkCancelDowngrade(current().subscription);
    const s = current().subscription;
    const previous = before();
    const pending = s.pendingChange!;
    s.pendingChange = null;
    current().downgradeCheck = null;
    await commit(previous, 'downgrade_canceled', {
      planChange: { kind: 'downgrade_canceled', fromPlanId: pending.planId, toPlanId: s.planId, effectiveAt: iso(Date.now()) },
      note: reason,
    });
    return view();
  }, { validator: (_request: { reason: string }) => { if (state) checkCancelDowngrade(state.subscription); } });

  setHandler(cancelSubscriptionUpdate, async () => {
    await loaded();
    checkCancel(current().subscription);
    const s = current().subscription;
    if (s.cancelAtPeriodEnd) return view();
    const previous = before();
    const next = advance(s.status, 'cancel_requested');
    if (next === 'canceled') {
      // Nothing paid is running: the cancellation takes effect at once.
      s.status = next;
      s.pendingChange = null;
      current().dunning = null;
      current().downgradeCheck = null;
      await commit(previous, 'canceled');
      return view();
    }
    // Trialing or active: the time paid for (or the trial) runs out first, as with the providers.
    s.cancelAtPeriodEnd = true;
    await commit(previous, 'cancel_at_period_end');
    return view();
  }, { validator: () => { if (state) checkCancel(state.subscription); } });

  // --- Main loop ---------------------------------------------------------------------------------------
  if (!state) {
    try {
      const subscription = await loader.loadSubscription(tenantId);
      state = { subscription, dunning: null, trialNoticeSent: false, downgradeCheck: null, seenEvents: [] };
      // A subscription the workflow takes over already past_due (restarted by reconciliation) dunns from now.
      if (subscription.status === 'past_due' || subscription.status === 'suspended') state.dunning = { since: iso(Date.now()), noticesSent: 0 };
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      log.warn('no subscription row appeared; the registration that started this workflow did not commit', { tenantId });
      return null;
    }
  }
  upsertMemo({ status: state.subscription.status, planId: state.subscription.planId, version: state.subscription.version });

  for (;;) {
    const event = inbox.shift();
    if (event) {
      await applyProviderEvent(event);
      continue;
    }
    if (recovered) {
      recovered = false;
      const next = transition(state.subscription.status, 'tenant_recovered');
      if (next !== INVALID_TRANSITION) {
        // The Platform Owner recovered the tenant: awaiting payment again, with a fresh dunning clock.
        const previous = before();
        state.subscription.status = next;
        state.dunning = { since: iso(Date.now()), noticesSent: 0 };
        await commit(previous, 'tenant_recovered');
      }
      continue;
    }
    const status = state.subscription.status;
    if (status === 'canceled' || cycleEnded || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await mirrorTail;
      if (inbox.length > 0 || recovered) continue;
      if (status === 'canceled') return view();
      return continueAsNew<typeof subscriptionLifecycle>({ tenantId, settings, carried: state });
    }
    const next = nextDeadline();
    if (next && next.at <= Date.now()) {
      await next.fire();
      continue;
    }
    const seenWakes = wakes;
    await condition(() => inbox.length > 0 || recovered || wakes !== seenWakes, next ? next.at - Date.now() : undefined);
  }
}
