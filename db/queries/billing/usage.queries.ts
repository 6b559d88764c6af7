import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';
import { planLimits } from './plans.queries';

const valueRow = z.object({ value: z.number() });

/** The limitable resources (the `resource` of a limit check, docs/reference/billing.md#rule-15). */
export const USAGE_METRICS = ['users', 'records', 'storage_bytes', 'events_per_day', 'modules'] as const;
export type UsageMetric = (typeof USAGE_METRICS)[number];

/** The metrics kept as counters; `users` is counted from memberships instead (migration 0014). */
export type CountedMetric = Exclude<UsageMetric, 'users'>;

/** Usage and limits as the API speaks them (the keys of docs/reference/billing.md#rule-19, camelCase). */
export interface UsageValues {
  users: number;
  records: number;
  storageBytes: number;
  eventsPerDay: number;
  modules: number;
}

/** The API key of each metric. */
export const METRIC_KEYS: Readonly<Record<UsageMetric, keyof UsageValues>> = {
  users: 'users', records: 'records', storage_bytes: 'storageBytes', events_per_day: 'eventsPerDay', modules: 'modules',
};

const utcToday = sql.fragment`(now() AT TIME ZONE 'UTC')::date`;

/**
 * Changes one counter of the transaction's tenant by delta (negative to release), in the caller's
 * transaction, so the count commits or rolls back with the change it counts. One upsert: concurrent
 * adjustments of the same counter wait for each other's row lock and add up exactly. A counter never
 * goes below zero (a release of something never counted is not a debt). events_per_day counts into
 * the current UTC day's row.
 */
export async function adjustUsage(tx: DatabaseTransactionConnection, metric: CountedMetric, delta: number): Promise<void> {
  if (!Number.isSafeInteger(delta)) throw new Error(`usage delta must be an integer, got ${delta}`);
  if (delta === 0) return;
  if (metric === 'events_per_day') {
    await tx.query(sql.unsafe`
      INSERT INTO usage_daily_events (tenant_id, day, value) VALUES (current_tenant_id(), ${utcToday}, GREATEST(${delta}::bigint, 0))
      ON CONFLICT (tenant_id, day) DO UPDATE SET value = GREATEST(usage_daily_events.value + ${delta}::bigint, 0)
    `);
    return;
  }
  await tx.query(sql.unsafe`
    INSERT INTO usage_counters (tenant_id, metric, value) VALUES (current_tenant_id(), ${metric}, GREATEST(${delta}::bigint, 0))
    ON CONFLICT (tenant_id, metric) DO UPDATE SET value = GREATEST(usage_counters.value + ${delta}::bigint, 0), updated_at = now()
  `);
}

/** The current value of each metric, as SQL expressions over the tenant `tenant` (an id expression). */
function metricExpressions(tenant: ReturnType<typeof sql.fragment>, day: ReturnType<typeof sql.fragment>) {
  const counter = (metric: string) => sql.fragment`coalesce((SELECT c.value FROM usage_counters c WHERE c.tenant_id = ${tenant} AND c.metric = ${metric}), 0)`;
  return {
    users: sql.fragment`(SELECT count(*) FROM memberships m WHERE m.tenant_id = ${tenant} AND m.status <> 'deleted')`,
    records: counter('records'),
    storage_bytes: counter('storage_bytes'),
    events_per_day: sql.fragment`coalesce((SELECT e.value FROM usage_daily_events e WHERE e.tenant_id = ${tenant} AND e.day = ${day}), 0)`,
    modules: counter('modules'),
  } satisfies Record<UsageMetric, unknown>;
}

const usageValues = z.object({
  users: z.number(), records: z.number(), storageBytes: z.number(), eventsPerDay: z.number(), modules: z.number(),
});

/** Every metric of the transaction's tenant now (events: today's, UTC). */
export function selectUsage(tx: DatabaseTransactionConnection): Promise<UsageValues> {
  const m = metricExpressions(sql.fragment`current_tenant_id()`, utcToday);
  return tx.one(sql.type(usageValues)`
    SELECT ${m.users} AS users, ${m.records} AS records, ${m.storage_bytes} AS "storageBytes",
           ${m.events_per_day} AS "eventsPerDay", ${m.modules} AS modules
  `);
}

/** One metric of the transaction's tenant now: what a limit check compares. */
export function selectUsageOf(tx: DatabaseTransactionConnection, metric: UsageMetric): Promise<number> {
  const expression = metricExpressions(sql.fragment`current_tenant_id()`, utcToday)[metric];
  return tx.oneFirst(sql.type(valueRow)`SELECT ${expression} AS value`);
}

/** A plan's limits as the catalogue holds them, money limits included when the plan names them. */
const limitsJson = planLimits.passthrough();

const planState = z.object({
  status: z.string(),
  planId: z.string(),
  planName: z.string(),
  limits: limitsJson,
  pendingPlanId: z.string().nullable(),
  pendingKind: z.string().nullable(),
  pendingLimits: limitsJson.nullable(),
});
export type PlanState = z.infer<typeof planState>;

/**
 * The transaction's tenant's subscription status, plan and limits, with the plan of a pending
 * change (pending_change {planId, kind}), for the gateway's limit checks; null without a subscription.
 */
export function selectPlanState(tx: DatabaseTransactionConnection): Promise<PlanState | null> {
  return tx.maybeOne(sql.type(planState)`
    SELECT s.status, p.id AS "planId", p.name AS "planName", p.limits,
           pp.id AS "pendingPlanId", s.pending_change ->> 'kind' AS "pendingKind", pp.limits AS "pendingLimits"
    FROM subscriptions s
    JOIN plans p ON p.id = s.plan_id
    LEFT JOIN plans pp ON pp.id = s.pending_change ->> 'planId'
    WHERE s.tenant_id = current_tenant_id()
  `);
}

const snapshotBatch = z.object({ lastTenantId: z.string().nullable(), tenants: z.number(), inserted: z.number() });
export type SnapshotBatch = z.infer<typeof snapshotBatch>;

/**
 * Snapshots the usage of up to `limit` tenants after `afterTenantId` (id order) for `day` (UTC;
 * events of that day, the other metrics as they stand). Runs as the owner role across tenants. A
 * tenant already snapshotted for the day is left as it is, so a rerun of the day changes nothing.
 */
export function insertUsageSnapshots(db: CommonQueryMethods, day: string, afterTenantId: string | null, limit: number): Promise<SnapshotBatch> {
  const m = metricExpressions(sql.fragment`b.id`, sql.fragment`${day}::date`);
  return db.one(sql.type(snapshotBatch)`
    WITH batch AS (
      SELECT t.id, s.plan_id FROM tenants t JOIN subscriptions s ON s.tenant_id = t.id
      WHERE t.deleted_at IS NULL AND t.id > ${afterTenantId ?? '00000000-0000-0000-0000-000000000000'}::uuid
      ORDER BY t.id LIMIT ${limit}
    ), inserted AS (
      INSERT INTO usage_snapshots (tenant_id, day, plan_id, users, records, storage_bytes, events_per_day, modules, limits)
      SELECT b.id, ${day}::date, b.plan_id, ${m.users}, ${m.records}, ${m.storage_bytes}, ${m.events_per_day}, ${m.modules},
             jsonb_build_object('users', p.limits -> 'users', 'records', p.limits -> 'records', 'storageBytes', p.limits -> 'storageBytes',
                                'eventsPerDay', p.limits -> 'eventsPerDay', 'modules', p.limits -> 'modules')
      FROM batch b JOIN plans p ON p.id = b.plan_id
      ON CONFLICT (tenant_id, day) DO NOTHING
      RETURNING 1
    )
    SELECT (SELECT id::text FROM batch ORDER BY id DESC LIMIT 1) AS "lastTenantId",
           (SELECT count(*) FROM batch) AS tenants, (SELECT count(*) FROM inserted) AS inserted
  `);
}

/** Drops per-day event counters older than `beforeDay` (their snapshots keep the totals). */
export async function deleteDailyEventsBefore(db: CommonQueryMethods, beforeDay: string): Promise<number> {
  const result = await db.query(sql.unsafe`DELETE FROM usage_daily_events WHERE day < ${beforeDay}::date`);
  return result.rowCount;
}

const snapshotRow = z.object({
  date: z.string(),
  planId: z.string(),
  takenAt: z.string(),
  usage: usageValues,
  limits: usageValues,
});
export type UsageSnapshot = z.infer<typeof snapshotRow>;

const snapshotColumns = sql.fragment`
  day::text AS date, plan_id AS "planId", taken_at AS "takenAt",
  jsonb_build_object('users', users, 'records', records, 'storageBytes', storage_bytes,
                     'eventsPerDay', events_per_day, 'modules', modules) AS usage,
  limits
`;

/** A page of the transaction's tenant's snapshots, newest first, before `beforeDay` when given. */
export function selectUsageSnapshots(tx: DatabaseTransactionConnection, beforeDay: string | null, limit: number): Promise<readonly UsageSnapshot[]> {
  return tx.any(sql.type(snapshotRow)`
    SELECT ${snapshotColumns}
    FROM usage_snapshots
    WHERE ${beforeDay === null ? sql.fragment`TRUE` : sql.fragment`day < ${beforeDay}::date`}
    ORDER BY day DESC
    LIMIT ${limit}
  `);
}

/** The last snapshot of a month (`YYYY-MM`), for usage of a past period. */
export function selectLastSnapshotOfMonth(tx: DatabaseTransactionConnection, month: string): Promise<UsageSnapshot | null> {
  return tx.maybeOne(sql.type(snapshotRow)`
    SELECT ${snapshotColumns}
    FROM usage_snapshots
    WHERE day >= ${`${month}-01`}::date AND day < (${`${month}-01`}::date + interval '1 month')
    ORDER BY day DESC
    LIMIT 1
  `);
}
