-- The module registry: which of the modules shipped with the platform (modules/<slug>/manifest.json)
-- each tenant has installed, whether they are active, and their configuration (DECISIONS.md,
-- Modules and the data layer). The manifests themselves are files, not rows: they ship with the
-- code that serves them. A module's permission keys live in the permissions registry (migration
-- 0010), registered, archived and restored by the same transactions that change a row here.
--
-- Uninstall is a soft delete (deleted_at): the module's data and the row stay, so a reinstall keeps
-- its id (the module_id of module.registry.* events), its configuration and its data.

CREATE TABLE tenant_modules (
  -- The module_id of document 3 (the partition key of platform.module.events): one per tenant and module.
  id            uuid PRIMARY KEY,
  tenant_id     uuid NOT NULL REFERENCES tenants (id),
  -- The manifest's slug; the same grammar as the manifest loader's (usable as an event type segment).
  slug          text NOT NULL CHECK (slug ~ '^[a-z][a-z0-9_]{0,49}$'),
  -- The manifest version installed last (an install of a newer manifest re-registers its keys).
  version       text NOT NULL CHECK (version ~ '^\d+\.\d+\.\d+$'),
  -- inactive: the gateway answers module-not-found for its routes, its permissions stay active.
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
  config        jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(config) = 'object'),
  installed_by  uuid REFERENCES users (id),
  -- When the current installation began (a reinstall starts a new one).
  installed_at  timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  deleted_at    timestamptz,
  CONSTRAINT tenant_modules_tenant_slug UNIQUE (tenant_id, slug)
);

ALTER TABLE tenant_modules ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenant_modules
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
-- Uninstall keeps the row (soft delete); nothing in the application removes one.
REVOKE DELETE ON tenant_modules FROM platform_app;
