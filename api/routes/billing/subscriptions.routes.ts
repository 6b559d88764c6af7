import { problems } from '../../../common/problems';
import {
  cancelDowngrade, cancelSubscription, changePlan, currentSubscription, selectInitialPlan,
} from '../../../services/billing/subscriptions';
import type { BillingDeps } from '../../../services/billing/deps';
import { authOf } from '../../context';
import { defineRoute, feeds, type AnyRoute } from '../../http/route-registry';
import {
  cancelDowngradeBody, changePlanBody, selectPlanBody, subscription, subscriptionParams, subscriptionQuery,
  type CancelDowngradeBody, type ChangePlanBody, type SelectPlanBody, type SubscriptionParams, type SubscriptionQuery,
} from './subscriptions.schemas';

type NoParams = Record<string, never>;
type NoQuery = Record<string, never>;

/** The tenant's subscription, as read or chosen, feeds the operations on it; a plan change also names the version it read. */
const SUBSCRIPTION_LINKS = {
  ...feeds(['billing.subscriptions.cancel', 'billing.subscriptions.cancelDowngrade']),
  'billing.subscriptions.changePlan': { parameters: { id: '$response.body#/id' }, requestBody: { version: '$response.body#/version' } },
};

/**
 * The tenant's subscription (docs/reference/billing.md, Rules: the subscription). Reads come from the PostgreSQL mirror; changes are
 * Updates of the tenant's subscription workflow, answered with the state it reached.
 *
 * `planChanged` drops this gateway's cached plan of the tenant once a change is written and before it is
 * answered: a downgrade blocks creation at once (docs/reference/billing.md#rule-8 and #rule-13), so the request after the answer
 * must see it. Other gateways drop theirs on billing.subscription.changed, within the TTL at the latest
 * (docs/decisions/billing.md).
 */
export function subscriptionRoutes(deps: BillingDeps, planChanged: (tenantId: string) => void = () => undefined): AnyRoute[] {
  /** The workflow's answer, after this gateway forgot the plan it held of the tenant. */
  const changed = async <T>(tenantId: string, change: Promise<T>): Promise<T> => {
    const answer = await change;
    planChanged(tenantId);
    return answer;
  };
  return [
    defineRoute<NoParams, SubscriptionQuery>({
      namespace: 'billing', method: 'GET', path: '/billing/subscriptions', operationId: 'billing.subscriptions.get',
      summary: 'The tenant\'s subscription',
      description: 'Every tenant has exactly one, trialing from registration. tenantId, when given, must be the caller\'s tenant (another is 404).',
      auth: 'bearer', permission: 'billing.view',
      schemas: { query: subscriptionQuery, response: { 200: subscription }, links: { 200: SUBSCRIPTION_LINKS } },
      async handler(ctx) {
        const { tenantId } = authOf(ctx);
        if (ctx.guard.query.tenantId !== undefined && ctx.guard.query.tenantId !== tenantId) throw problems.notFound('subscription');
        ctx.body = await currentSubscription(deps, tenantId);
      },
    }),
    defineRoute<NoParams, NoQuery, SelectPlanBody>({
      namespace: 'billing', method: 'POST', path: '/billing/subscriptions', operationId: 'billing.subscriptions.select',
      summary: 'Selects the plan of a trialing subscription',
      description: 'The initial plan selection {planId}: while trialing, the plan changes at once (nothing is billed yet). '
        + 'A subscription past its trial changes plans with PATCH (409 conflict); a terminated one is 422 invalid-transition.',
      auth: 'bearer', permission: 'billing.plan.change',
      schemas: { body: selectPlanBody, response: { 200: subscription }, links: { 200: SUBSCRIPTION_LINKS } },
      async handler(ctx) {
        const { tenantId } = authOf(ctx);
        ctx.body = await changed(tenantId, selectInitialPlan(deps, tenantId, ctx.guard.body.planId));
      },
    }),
    defineRoute<SubscriptionParams, NoQuery, ChangePlanBody>({
      namespace: 'billing', method: 'PATCH', path: '/billing/subscriptions/:id', operationId: 'billing.subscriptions.changePlan',
      summary: 'Changes the plan (optimistic lock on version)',
      description: 'An upgrade applies at once; a downgrade is pending (pendingChange) until the next billing cycle, its creation '
        + 'limits apply at once, and a tenant still over them 30 days later goes past_due. A version other than the current '
        + 'one is 409 optimistic-lock-conflict; a change while one is pending is 409 plan-change-in-progress; a terminated or '
        + 'canceled subscription is 422 invalid-transition.',
      auth: 'bearer', permission: 'billing.plan.change',
      schemas: { params: subscriptionParams, body: changePlanBody, response: { 200: subscription } },
      async handler(ctx) {
        const { tenantId } = authOf(ctx);
        ctx.body = await changed(tenantId, changePlan(deps, tenantId, ctx.guard.params.id, ctx.guard.body));
      },
    }),
    defineRoute<SubscriptionParams>({
      namespace: 'billing', method: 'DELETE', path: '/billing/subscriptions/:id', operationId: 'billing.subscriptions.cancel',
      summary: 'Cancels the subscription at the end of its period',
      description: 'A trialing or active subscription keeps running to the end of its trial or paid period (cancelAtPeriodEnd), '
        + 'then becomes canceled; a past_due or suspended one is canceled at once. Answers the subscription.',
      auth: 'bearer', permission: 'billing.plan.change',
      schemas: { params: subscriptionParams, response: { 200: subscription } },
      async handler(ctx) {
        const { tenantId } = authOf(ctx);
        ctx.body = await changed(tenantId, cancelSubscription(deps, tenantId, ctx.guard.params.id));
      },
    }),
    defineRoute<SubscriptionParams, NoQuery, CancelDowngradeBody>({
      namespace: 'billing', method: 'POST', path: '/billing/subscriptions/:id/cancel-downgrade', operationId: 'billing.subscriptions.cancelDowngrade',
      summary: 'Cancels a pending downgrade before the next billing cycle',
      description: 'No pending downgrade is 409 conflict.',
      auth: 'bearer', permission: 'billing.plan.change',
      schemas: { params: subscriptionParams, body: cancelDowngradeBody, response: { 200: subscription } },
      async handler(ctx) {
        const { tenantId } = authOf(ctx);
        ctx.body = await changed(tenantId, cancelDowngrade(deps, tenantId, ctx.guard.params.id, ctx.guard.body.reason));
      },
    }),
  ];
}
