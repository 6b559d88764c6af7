import { problems } from '../../common/problems';
import {
  METRIC_KEYS, selectLastSnapshotOfMonth, selectPlanState, selectUsage, selectUsageSnapshots, USAGE_METRICS,
  type UsageSnapshot, type UsageValues,
} from '../../db/queries/billing/usage.queries';
import { isPlatformOwner } from '../../db/queries/identity/platform.queries';
import { withTenant } from '../../db/tenant';
import { decodePageToken, encodePageToken } from '../../common/pagination';
import type { PageQuery } from '../../common/pagination';
import Joi from 'joi';
import type { AuthState } from '../../common/context';
import type { BillingStateDeps } from './state-deps';
import { creationLimitOf } from './limits';

export type UsageShape = 'period' | 'limits';

export interface UsageQuery {
  /** The request parameter of docs/reference/billing.md#rule-20: the caller's own tenant, or any tenant for the Platform Owner. */
  tenant_id?: string;
  /** YYYY-MM: usage of that month (shape 1); a past month comes from its last daily snapshot. */
  period?: string;
  /** period: shape 1 ({period, usage, limits}); limits: shape 2 (each metric {current, limit, percentage}). */
  shape?: UsageShape;
}

/** Usage shape 1, of a period (docs/reference/billing.md#rule-19). */
export interface PeriodUsage {
  tenantId: string;
  period: string;
  usage: UsageValues;
  limits: UsageValues;
}

export interface MetricUsage {
  current: number;
  /** The enforced ceiling (0: unlimited). */
  limit: number;
  /** current / limit in percent (two decimals); null when unlimited. */
  percentage: number | null;
}

/** Usage shape 2, against the limits (docs/reference/billing.md#rule-19). */
export interface PlanUsage {
  tenantId: string;
  planId: string;
  planName: string;
  usage: Record<keyof UsageValues, MetricUsage>;
}

const currentMonth = (): string => new Date().toISOString().slice(0, 7);

/**
 * The tenant whose usage is read: the caller's own, unless `tenant_id` names another. A billing.view
 * caller may name a tenant (docs/reference/billing.md#rule-20); only the Platform Owner (not under an impersonation token) may
 * read another tenant's usage. For anyone else another tenant's usage is answered as not existing
 * (404, the platform rule for every other tenant's resource), so tenant ids cannot be probed.
 */
async function usageTenant(deps: BillingStateDeps, auth: AuthState, tenantId: string | undefined): Promise<string> {
  if (tenantId === undefined || tenantId === auth.tenantId) return auth.tenantId;
  const platformOwner = !auth.impersonatorId && !auth.apiKey && await withTenant(deps.db, auth.tenantId, (tx) => isPlatformOwner(tx, auth.userId));
  if (!platformOwner) throw problems.notFound('tenant');
  return tenantId;
}

/**
 * GET /billing/usage in the shape the caller asks for (docs/decisions/billing.md): shape 1 when
 * `period` or `shape=period` is given, else shape 2. Live values are read now; a past period is
 * answered from the last snapshot of that month (404 when there is none).
 */
export async function readUsage(deps: BillingStateDeps, auth: AuthState, query: UsageQuery): Promise<PeriodUsage | PlanUsage> {
  const tenantId = await usageTenant(deps, auth, query.tenant_id);
  const shape = query.shape ?? (query.period ? 'period' : 'limits');
  const period = query.period ?? currentMonth();
  if (shape === 'period' && period !== currentMonth()) {
    const snapshot = await withTenant(deps.db, tenantId, (tx) => selectLastSnapshotOfMonth(tx, period));
    if (!snapshot) throw problems.notFound(`usage snapshot of ${period}`);
    return { tenantId, period, usage: snapshot.usage, limits: snapshot.limits };
  }
  const { usage, plan } = await withTenant(deps.db, tenantId, async (tx) => ({ usage: await selectUsage(tx), plan: await selectPlanState(tx) }));
  if (!plan) throw problems.notFound('subscription');
  const limits = effectiveLimits(plan);
  if (shape === 'period') return { tenantId, period, usage, limits };
  // Every member of UsageValues is a number (Object.entries types an interface's values as any).
  const metrics = Object.fromEntries(Object.entries(usage).map(([key, current]: [string, number]) => {
    const limit = limits[key as keyof UsageValues];
    return [key, { current, limit, percentage: limit > 0 ? Math.round((current / limit) * 10_000) / 100 : null }];
  })) as PlanUsage['usage'];
  return { tenantId, planId: plan.planId, planName: plan.planName, usage: metrics };
}

/** The limits the gateway enforces for new resources (a pending downgrade's included). */
function effectiveLimits(plan: NonNullable<Awaited<ReturnType<typeof selectPlanState>>>): UsageValues {
  return Object.fromEntries(USAGE_METRICS.map((metric) => [METRIC_KEYS[metric], creationLimitOf(plan, metric)?.allowed ?? 0])) as unknown as UsageValues;
}

const datePosition = Joi.object<{ date: string }>({ date: Joi.string().isoDate() });

/** GET /billing/usage/history: the tenant's daily snapshots, newest first, from the reporting pool. */
export async function readUsageHistory(deps: BillingStateDeps, auth: AuthState, query: PageQuery): Promise<{ data: UsageSnapshot[]; next_page_token?: string }> {
  const position = decodePageToken(query.page_token, datePosition);
  const rows = await withTenant(deps.analyticsDb, auth.tenantId, (tx) => selectUsageSnapshots(tx, position?.date ?? null, query.page_size + 1));
  const data = rows.slice(0, query.page_size);
  return rows.length > query.page_size ? { data, next_page_token: encodePageToken({ date: data[data.length - 1].date }) } : { data };
}
