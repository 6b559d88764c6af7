import { ApplicationFailure } from '@temporalio/activity';
import { requestActor } from '../../common/temporal/activity-context';
import {
  isOverPlanLimits, loadSubscription, mirrorSubscription, ownerEmails, planTerms,
  type MirrorChange, type PlanTerms, type SubscriptionMirrorDeps,
} from '../../services/billing/subscription-mirror';
import type { SubscriptionView } from '../../workflows/billing/billing.messages';
import { refusalsAsFailures } from '../failures';

export type { MirrorChange };

/** The subscription workflow's activities: services/billing/subscription-mirror.ts. An unknown plan fails for good (not-found). */
export function createBillingActivities(deps: SubscriptionMirrorDeps) {
  return {
    /**
     * The subscription row written at registration. The workflow may be started a moment before the
     * registration commits, so a missing row is retried; if it never appears (the registration
     * rolled back) the workflow gives up after its schedule-to-close timeout and ends.
     */
    async loadSubscription(tenantId: string): Promise<SubscriptionView> {
      const subscription = await loadSubscription(deps, tenantId);
      if (!subscription) throw ApplicationFailure.retryable(`tenant ${tenantId} has no subscription (yet)`, 'subscription-not-found');
      return subscription;
    },

    async planTerms(planId: string): Promise<PlanTerms> {
      return refusalsAsFailures(() => planTerms(deps, planId));
    },

    async ownerEmails(tenantId: string): Promise<string[]> {
      return ownerEmails(deps, tenantId);
    },

    async isOverPlanLimits(tenantId: string, planId: string): Promise<boolean> {
      return refusalsAsFailures(() => isOverPlanLimits(deps, tenantId, planId));
    },

    /** The change's actor is the sender of the request the workflow carried (its propagated context). */
    async mirrorSubscription(change: MirrorChange): Promise<boolean> {
      return mirrorSubscription(deps, change, requestActor());
    },
  };
}

export type BillingActivities = ReturnType<typeof createBillingActivities>;
