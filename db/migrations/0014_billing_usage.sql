-- Billing, part 2 (document 1, Usage, Limits, Termination): usage counters, their daily snapshots,
-- and the mirror of the tenant termination workflow.
--
-- Ownership: all three tables are tenant-owned (row-level security by app.tenant_id). The gateway
-- reads them under withTenant; the Temporal activities (snapshots, termination) work across
-- tenants as the owner role, which row-level security does not restrict.
--
-- The users metric has no counter: it is counted from memberships (every membership not deleted,
-- blocked ones included: a blocked member still holds a seat), so it can never drift from the rows
-- it counts. See docs/decisions.md, Billing.

-- Cumulative counters (records, storage_bytes, modules). A domain changes one in the transaction of
-- the change it counts with one upsert (value = value + delta), so concurrent changes queue on the
-- row lock and none is lost.
CREATE TABLE usage_counters (
  tenant_id   uuid NOT NULL REFERENCES tenants (id),
  metric      text NOT NULL CHECK (metric IN ('records', 'storage_bytes', 'modules')),
  value       bigint NOT NULL DEFAULT 0 CHECK (value >= 0),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, metric)
);

-- events_per_day: one row per tenant and UTC day, so a day starts at zero without any reset job,
-- and the day that just ended is still there for its snapshot. The snapshot activity deletes rows
-- older than a week.
CREATE TABLE usage_daily_events (
  tenant_id   uuid NOT NULL REFERENCES tenants (id),
  day         date NOT NULL,
  value       bigint NOT NULL DEFAULT 0 CHECK (value >= 0),
  PRIMARY KEY (tenant_id, day)
);

-- One snapshot per tenant and UTC day (GET /billing/usage/history), taken by the daily Schedule.
-- The primary key makes a second run for the same day a no-op.
CREATE TABLE usage_snapshots (
  tenant_id       uuid NOT NULL REFERENCES tenants (id),
  day             date NOT NULL,
  plan_id         text NOT NULL REFERENCES plans (id),
  users           bigint NOT NULL,
  records         bigint NOT NULL,
  storage_bytes   bigint NOT NULL,
  events_per_day  bigint NOT NULL,
  modules         bigint NOT NULL,
  -- The plan's limits on that day (document 1 keys), so history shows what applied then.
  limits          jsonb NOT NULL,
  taken_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, day)
);

-- The tenant termination workflow's state, written by its activities for
-- GET /admin/tenants/:id/termination-status. The workflow is the source of truth; this row is a
-- read model. A later termination of the same tenant (after a recovery) starts the row afresh.
CREATE TABLE tenant_terminations (
  tenant_id     uuid PRIMARY KEY REFERENCES tenants (id),
  status        text NOT NULL CHECK (status IN ('in_progress', 'completed', 'recovered')),
  phase         text NOT NULL CHECK (phase IN ('deleting_records', 'deleting_files', 'completed')),
  -- What each phase has done so far ({records: {...counts}, files: {deleted}}), from its heartbeats.
  progress      jsonb NOT NULL DEFAULT '{}',
  started_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL DEFAULT now(),
  completed_at  timestamptz,
  recovered_at  timestamptz
);

-- The termination's records phase revokes a tenant's sessions in batches.
CREATE INDEX refresh_tokens_tenant ON refresh_tokens (tenant_id) WHERE revoked_at IS NULL;

ALTER TABLE usage_counters ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON usage_counters
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

ALTER TABLE usage_daily_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON usage_daily_events
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

ALTER TABLE usage_snapshots ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON usage_snapshots
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

ALTER TABLE tenant_terminations ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenant_terminations
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

-- Snapshots and the termination mirror are written by the workers (owner role) only.
REVOKE INSERT, UPDATE, DELETE ON usage_snapshots, tenant_terminations FROM platform_app;
