-- A tenant's RBAC version (0010) is also announced: every bump sends `<tenant id>:<version>` on
-- the channel rbac_versions. PostgreSQL delivers a notification when the bumping transaction
-- commits, and never when it rolls back, so every writer is covered (the gateway's routes,
-- workflows, module installs, an operator's SQL) without knowing about it. The gateway keeps the
-- versions it has heard in memory instead of reading the counter on every request; while its
-- LISTEN connection is down it reads the counter per request again (api/access/tenant-versions.ts).
-- The counter stays the truth: a notification only ever moves a known version forward.
CREATE OR REPLACE FUNCTION rbac_bump_version(p_tenant_id uuid) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  bumped bigint;
BEGIN
  INSERT INTO rbac_versions AS v (tenant_id, version) VALUES (p_tenant_id, 1)
  ON CONFLICT (tenant_id) DO UPDATE SET version = v.version + 1, changed_at = now()
  RETURNING version INTO bumped;
  PERFORM pg_notify('rbac_versions', p_tenant_id::text || ':' || bumped::text);
  RETURN bumped;
END $$;
