import { problems } from '../../../common/problems';
import type { BillingDeps } from '../../../services/billing/deps';
import { findPlan, listPlans } from '../../../services/billing/plans';
import { defineRoute, feeds, type AnyRoute } from '../../http/route-registry';
import { plan, planList, planParams, type PlanParams } from './plans.schemas';

/** The plan catalogue (docs/reference/billing.md#rule-1; seeded by db/migrations/0002_identity.sql). */
export function planRoutes(deps: BillingDeps): AnyRoute[] {
  return [
    defineRoute({
      namespace: 'billing', method: 'GET', path: '/billing/plans', operationId: 'billing.plans.list',
      summary: 'Lists the plans, cheapest first',
      auth: 'bearer', permission: 'billing.view',
      schemas: {
        response: { 200: planList },
        // The catalog's first plan feeds its read and the plan choices of the subscription.
        links: {
          200: {
            ...feeds(['billing.plans.get'], { from: '$response.body#/data/0/id' }),
            'billing.subscriptions.select': { requestBody: { planId: '$response.body#/data/0/id' } },
          },
        },
      },
      async handler(ctx) {
        ctx.body = { data: await listPlans(deps.db) };
      },
    }),
    defineRoute<PlanParams>({
      namespace: 'billing', method: 'GET', path: '/billing/plans/:id', operationId: 'billing.plans.get',
      summary: 'One plan with its limits and features',
      auth: 'bearer', permission: 'billing.view',
      schemas: { params: planParams, response: { 200: plan } },
      async handler(ctx) {
        const found = await findPlan(deps.db, ctx.guard.params.id);
        if (!found) throw problems.notFound('plan');
        ctx.body = found;
      },
    }),
  ];
}
