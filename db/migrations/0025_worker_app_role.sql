-- Tenant scoping twice in the workers too (issue 15): the activities that work for one tenant run on
-- the application role in that tenant's transaction (workers/main.ts, appPool), so row-level
-- security checks every statement again after the query has named the tenant. Only the Schedules'
-- fleet-wide sweeps keep the owner role. The grants below are what those activities write or read
-- that the application role could not before; each stays under the table's tenant_isolation policy.

-- The subscription workflow mirrors its state (activities/billing/subscription.activities.ts). The
-- workflow is still the one writer of these columns: the gateway's billing code never updates them.
GRANT UPDATE (plan_id, status, version, trial_ends_at, current_period_start, current_period_end,
              cancel_at_period_end, pending_change, status_changed_at, updated_at)
  ON subscriptions TO platform_app;

-- The termination workflow keeps its read model (activities/billing/termination.activities.ts).
GRANT INSERT, UPDATE ON tenant_terminations TO platform_app;

-- The cold export reads its tenant's live archive objects (activities/audit/cold-export.activities.ts).
-- Retention (the owner role, not subject to this policy) remains their only writer.
ALTER TABLE audit_cold_objects ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_read ON audit_cold_objects FOR SELECT USING (tenant_id = current_tenant_id());
GRANT SELECT ON audit_cold_objects TO platform_app;
