-- Access control: the permission registry and the per-tenant RBAC version that validates the
-- gateway's permission cache (see docs/decisions.md, Access control).
--
--   permissions   one catalogue, two kinds of rows:
--                   system keys of document 1 (tenant_id NULL, module 'system'), seeded here and
--                   read by every tenant;
--                   module keys (tenant_id set, module = the slug), registered per tenant when a
--                   module is installed, because install, uninstall (archival) and reinstall
--                   (restore) happen per tenant.
--   rbac_versions a counter per tenant, bumped in the same transaction as any change to its roles,
--                 role assignments or permission registry (by the triggers below, so no writer can
--                 forget it). The gateway caches resolved permissions and compares this counter on
--                 every request, so a change takes effect on the next request even when Kafka (the
--                 auth.role.changed invalidation) is down. It also serializes a tenant's RBAC
--                 writes: a change first bumps (locks) the row, then counts roles and assignments
--                 against the limits without a race.

CREATE TABLE permissions (
  -- NULL for the system keys every tenant shares.
  tenant_id    uuid REFERENCES tenants (id),
  key          text NOT NULL CHECK (key ~ '^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$' AND length(key) <= 200),
  -- 'system' for the keys of document 1; otherwise the slug of the module that registered the key.
  module       text NOT NULL CHECK (module ~ '^[a-z][a-z0-9_-]*$'),
  description  text NOT NULL DEFAULT '',
  -- Set when the module is uninstalled (soft delete) for this tenant; cleared on reinstall. An
  -- archived key grants nothing even while a role still holds it.
  archived_at  timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT permissions_tenant_key UNIQUE NULLS NOT DISTINCT (tenant_id, key),
  CONSTRAINT permissions_system_rows CHECK ((tenant_id IS NULL) = (module = 'system')),
  CONSTRAINT permissions_system_never_archived CHECK (tenant_id IS NOT NULL OR archived_at IS NULL),
  -- Document 1, Permission keys 1-2: a module's keys start with its slug; system./platform. are reserved.
  CONSTRAINT permissions_module_prefix CHECK (
    tenant_id IS NULL OR (starts_with(key, module || '.') AND module NOT IN ('system', 'platform'))
  )
);
CREATE INDEX permissions_tenant_module ON permissions (tenant_id, module);

-- Module keys may not shadow a system key's first segment (a module called `users` would otherwise
-- register keys that users.* already grants). Checked against the seeded rows, so the list lives in
-- one place.
CREATE FUNCTION permissions_check_module() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
  IF NEW.tenant_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM permissions p WHERE p.tenant_id IS NULL AND split_part(p.key, '.', 1) = NEW.module
  ) THEN
    RAISE EXCEPTION 'module % shadows system permissions', NEW.module USING ERRCODE = 'check_violation',
      CONSTRAINT = 'permissions_module_not_system';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER permissions_check_module BEFORE INSERT OR UPDATE OF module ON permissions
  FOR EACH ROW EXECUTE FUNCTION permissions_check_module();

INSERT INTO permissions (key, module, description) VALUES
  ('tenants.list', 'system', 'List tenants'),
  ('tenants.create', 'system', 'Create tenants'),
  ('tenants.update', 'system', 'Update tenants'),
  ('tenants.block', 'system', 'Block tenants'),
  ('tenants.delete', 'system', 'Delete tenants'),
  ('modules.list', 'system', 'List modules'),
  ('modules.install', 'system', 'Install modules'),
  ('modules.configure', 'system', 'Configure modules'),
  ('modules.uninstall', 'system', 'Uninstall modules'),
  ('users.list', 'system', 'List users and their permissions'),
  ('users.create', 'system', 'Create and invite users'),
  ('users.update', 'system', 'Update and restore users'),
  ('users.delete', 'system', 'Delete users'),
  ('users.impersonate', 'system', 'Impersonate users'),
  ('roles.list', 'system', 'List roles and permissions'),
  ('roles.create', 'system', 'Create roles'),
  ('roles.update', 'system', 'Change roles'),
  ('roles.delete', 'system', 'Delete custom roles'),
  ('roles.assign', 'system', 'Assign and revoke roles'),
  ('audit.read', 'system', 'Read the audit trail'),
  ('audit.export', 'system', 'Export the audit trail'),
  ('audit.delete', 'system', 'Delete or anonymize audit records'),
  ('billing.view', 'system', 'View plans, subscription and usage'),
  ('billing.change', 'system', 'Change billing settings'),
  ('billing.export', 'system', 'Export invoices'),
  ('billing.plan.change', 'system', 'Change the plan'),
  ('billing.payment.manage', 'system', 'Manage payment methods'),
  ('billing.info.update', 'system', 'Update billing information'),
  ('settings.read', 'system', 'Read tenant settings'),
  ('settings.update', 'system', 'Change tenant settings'),
  -- Platform-only: never assignable to a tenant role (the gateway refuses them; listings hide them).
  ('system.shutdown', 'system', 'Shut the platform down'),
  ('system.backup', 'system', 'Back the platform up'),
  ('system.restore', 'system', 'Restore the platform from a backup');

-- Every tenant reads the system keys and its own module keys; it writes only its own rows (module
-- install runs in the gateway as platform_app). System rows change only through migrations.
ALTER TABLE permissions ENABLE ROW LEVEL SECURITY;
CREATE POLICY catalogue_read ON permissions FOR SELECT USING (tenant_id IS NULL OR tenant_id = current_tenant_id());
CREATE POLICY tenant_insert ON permissions FOR INSERT WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_update ON permissions FOR UPDATE
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_delete ON permissions FOR DELETE USING (tenant_id = current_tenant_id());

CREATE TABLE rbac_versions (
  tenant_id   uuid PRIMARY KEY REFERENCES tenants (id),
  version     bigint NOT NULL,
  changed_at  timestamptz NOT NULL DEFAULT now()
);
-- Reached only through the functions below: the application can neither set a counter back nor
-- bump another tenant's.
REVOKE ALL ON rbac_versions FROM platform_app;

CREATE FUNCTION rbac_bump_version(p_tenant_id uuid) RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
  INSERT INTO rbac_versions AS v (tenant_id, version) VALUES (p_tenant_id, 1)
  ON CONFLICT (tenant_id) DO UPDATE SET version = v.version + 1, changed_at = now()
  RETURNING version
$$;
REVOKE ALL ON FUNCTION rbac_bump_version(uuid) FROM PUBLIC;

-- Called first by every RBAC change of the gateway: bumps the counter of the transaction's own
-- tenant and holds its row lock until commit, so concurrent changes of one tenant run one after
-- the other (limits are counted race-free) while other tenants are not touched.
CREATE FUNCTION rbac_lock_tenant() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  IF current_tenant_id() IS NULL THEN
    RAISE EXCEPTION 'rbac_lock_tenant needs app.tenant_id';
  END IF;
  RETURN rbac_bump_version(current_tenant_id());
END $$;

-- The per-request cache check: the counters of some tenants (0 for one never changed). Called with
-- every tenant that has requests waiting in the same tick, so one query serves a burst.
CREATE FUNCTION rbac_versions_of(p_tenant_ids uuid[])
RETURNS TABLE (tenant_id uuid, version bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT t.id, coalesce(v.version, 0)
  FROM unnest(p_tenant_ids) AS t (id) LEFT JOIN rbac_versions v ON v.tenant_id = t.id
$$;

REVOKE ALL ON FUNCTION rbac_lock_tenant(), rbac_versions_of(uuid[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rbac_lock_tenant(), rbac_versions_of(uuid[]) TO platform_app;

-- Any change to what a tenant's requests may do bumps its counter in the changing transaction,
-- whoever writes it (the RBAC routes, registration, the users and modules routes, an operator's
-- SQL). A platform-scoped role (tenant_id NULL) belongs to the platform tenant.
CREATE FUNCTION rbac_touch() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  affected uuid;
BEGIN
  IF TG_OP = 'DELETE' THEN affected := OLD.tenant_id; ELSE affected := NEW.tenant_id; END IF;
  IF affected IS NULL AND TG_TABLE_NAME = 'roles' THEN
    SELECT id INTO affected FROM tenants WHERE kind = 'platform';
  END IF;
  IF affected IS NOT NULL THEN
    PERFORM rbac_bump_version(affected);
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.tenant_id IS DISTINCT FROM NEW.tenant_id AND OLD.tenant_id IS NOT NULL THEN
    PERFORM rbac_bump_version(OLD.tenant_id);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER roles_rbac_touch AFTER INSERT OR UPDATE OR DELETE ON roles
  FOR EACH ROW EXECUTE FUNCTION rbac_touch();
CREATE TRIGGER user_roles_rbac_touch AFTER INSERT OR UPDATE OR DELETE ON user_roles
  FOR EACH ROW EXECUTE FUNCTION rbac_touch();
CREATE TRIGGER permissions_rbac_touch AFTER INSERT OR UPDATE OR DELETE ON permissions
  FOR EACH ROW EXECUTE FUNCTION rbac_touch();
