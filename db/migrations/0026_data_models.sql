-- The data layer's tables (issue 16): every model of a shipped module manifest is a table
-- mod_<slug>.<model>, created and migrated by workers/data-provision.ts at the platform's bring-up
-- (docs/decisions/data.md). This registry records what was applied, per model, so the next
-- manifest version is compared with it: added fields and models migrate, a destructive change is
-- refused before anything runs.
--
-- Owner-only: only the provisioning run (the owner role, which alone may run DDL) reads or writes it.

CREATE TABLE data_models (
  -- The manifest's slug (the same grammar as tenant_modules.slug) and the model (its table).
  module      text NOT NULL CHECK (module ~ '^[a-z][a-z0-9_]{0,49}$'),
  model       text NOT NULL CHECK (model ~ '^[a-z][a-z0-9_]{0,62}$'),
  -- The manifest's fields as applied: {"<field>": {"type", "nullable", "references"?: {"model", "field"}}}.
  fields      jsonb NOT NULL CHECK (jsonb_typeof(fields) = 'object'),
  -- The manifest version that last changed the table.
  version     text NOT NULL CHECK (version ~ '^\d+\.\d+\.\d+$'),
  applied_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (module, model)
);

-- Migration 0001's default privileges grant every new table of public to the application role.
REVOKE ALL ON data_models FROM PUBLIC, platform_app;
