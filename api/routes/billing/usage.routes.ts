import { readUsage, readUsageHistory, type UsageQuery } from '../../../services/billing/usage';
import type { BillingStateDeps } from '../../../services/billing/state-deps';
import { authOf } from '../../context';
import type { PageQuery } from '../../../common/pagination';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { usage, usageHistory, usageHistoryQuery, usageQuery } from './usage.schemas';

type NoParams = Record<string, never>;

/** Usage now and its daily history (namespace billing; docs/reference/billing.md, Rules: usage). */
export function usageRoutes(deps: BillingStateDeps): AnyRoute[] {
  return [
    defineRoute<NoParams, UsageQuery>({
      namespace: 'billing', method: 'GET', path: '/billing/usage', operationId: 'billing.usage.get',
      summary: 'The tenant’s usage against its plan limits',
      description: 'Two shapes. With period=YYYY-MM or shape=period: {tenantId, period, usage, limits} '
        + '(a past month from its last daily snapshot, 404 without one). Otherwise (or shape=limits): {tenantId, planId, planName, '
        + 'usage: each {current, limit, percentage}}. Limits are those enforced for new resources (a pending downgrade’s at once); 0 is unlimited.',
      auth: 'bearer', permission: 'billing.view',
      schemas: { query: usageQuery, response: { 200: usage } },
      async handler(ctx) {
        ctx.body = await readUsage(deps, authOf(ctx), ctx.guard.query);
      },
    }),
    defineRoute<NoParams, PageQuery>({
      namespace: 'billing', method: 'GET', path: '/billing/usage/history', operationId: 'billing.usage.history',
      summary: 'Daily usage snapshots, newest first',
      description: 'One entry per UTC day, taken shortly after the day ended by the usage snapshot Schedule: that day’s events, '
        + 'the other counters as they stood, and the plan’s limits then.',
      auth: 'bearer', permission: 'billing.view',
      schemas: { query: usageHistoryQuery, response: { 200: usageHistory } },
      async handler(ctx) {
        ctx.body = await readUsageHistory(deps, authOf(ctx), ctx.guard.query);
      },
    }),
  ];
}
