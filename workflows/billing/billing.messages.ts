import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

/**
 * Messages of the subscription workflow (`subscription:<tenantId>`), shared by the workflow and its
 * callers (the gateway's billing routes and webhooks, the termination workflow, the Temporal UI).
 * Definitions and types only: importing this file pulls in no workflow code.
 */

/**
 * The subscription's status and pending plan change as the workflow keeps them. The contract states them
 * itself instead of naming the mirror table's types: a workflow imports nothing of db/
 * (docs/decisions/layout.md, Workflow contracts), and the service that turns a mirror row into a
 * SubscriptionView (services/billing/subscription-mirror.ts) does not compile should the table gain a
 * status or a field this contract lacks.
 */
export type SubscriptionStatus = 'trialing' | 'active' | 'past_due' | 'suspended' | 'terminated' | 'canceled';

/** A plan change waiting for the next billing cycle (a downgrade takes effect then). */
export interface PendingChange {
  planId: string;
  kind: 'downgrade';
  requestedAt: string;
  effectiveAt: string;
}

export type BillingProvider = 'stripe' | 'paddle';

/** Durations of the lifecycle in days (config.billing.lifecycle), given to the workflow as input. */
export interface LifecycleSettings {
  trialNoticeDays: number;
  suspendAfterDays: number;
  terminateAfterDays: number;
  /** Dunning e-mails, in days after going past_due. */
  dunningNoticeDays: number[];
  downgradeGraceDays: number;
  /** Where the notice e-mails (workflow sendEmail) and the termination child run. */
  notifyTaskQueue: string;
}

/** The subscription as docs/reference/billing.md shows it (and as the mirror row holds it). */
export interface SubscriptionView {
  id: string;
  tenantId: string;
  planId: string;
  status: SubscriptionStatus;
  version: number;
  trialEndsAt: string | null;
  currentPeriodStart: string;
  currentPeriodEnd: string;
  cancelAtPeriodEnd: boolean;
  pendingChange: PendingChange | null;
}

/** A past_due episode: from when the dunning clock counts, and how many of its notices went out. */
export interface Dunning {
  since: string;
  noticesSent: number;
}

/** Everything a run hands to the next one through continueAsNew. */
export interface CarriedState {
  subscription: SubscriptionView;
  dunning: Dunning | null;
  trialNoticeSent: boolean;
  /** docs/reference/billing.md#rule-9: a downgrade still over the new plan's limits after the grace period moves to past_due. */
  downgradeCheck: { planId: string; at: string } | null;
  /** Provider event ids already applied (the last few), so a redelivered signal is applied once. */
  seenEvents: string[];
}

export interface SubscriptionInput {
  tenantId: string;
  settings: LifecycleSettings;
  /** Absent on the first run: the workflow loads the subscription row written at registration. */
  carried?: CarriedState;
}

/** What a webhook hands over, already verified and reduced to what the lifecycle needs. */
export interface ProviderEvent {
  provider: BillingProvider;
  eventId: string;
  kind: 'payment_succeeded' | 'payment_failed' | 'canceled' | 'updated';
  /** The plan the provider reports (subscription updated), when it names one of ours. */
  planId?: string;
  /** The end of the period the payment covers, when the provider says so (ISO 8601). */
  periodEnd?: string;
}

export interface ChangePlanRequest {
  planId: string;
  version: number;
  /** Decided by the gateway from the catalogue's prices: an upgrade applies at once, a downgrade at the next cycle. */
  kind: 'upgrade' | 'downgrade';
}

export const providerEventSignal = defineSignal<[ProviderEvent]>('providerEvent');
/** Sent by the termination workflow when the Platform Owner recovers a tenant: back to suspended. */
export const tenantRecoveredSignal = defineSignal('tenantRecovered');

export const changePlanUpdate = defineUpdate<SubscriptionView, [ChangePlanRequest]>('changePlan');
export const selectPlanUpdate = defineUpdate<SubscriptionView, [{ planId: string }]>('selectPlan');
export const cancelDowngradeUpdate = defineUpdate<SubscriptionView, [{ reason: string }]>('cancelDowngrade');
export const cancelSubscriptionUpdate = defineUpdate<SubscriptionView>('cancelSubscription');

/** Where the subscription stands, dunning included (the Temporal UI's query tab, tests). */
export const subscriptionStateQuery = defineQuery<CarriedState>('subscriptionState');

/** Failure types of the updates: the problem suffixes the gateway answers with. */
export const UPDATE_REFUSALS = ['optimistic-lock-conflict', 'plan-change-in-progress', 'invalid-transition', 'conflict'] as const;
export type UpdateRefusal = (typeof UPDATE_REFUSALS)[number];

export const subscriptionWorkflowId = (tenantId: string): string => `subscription:${tenantId}`;
