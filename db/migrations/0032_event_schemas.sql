-- Event bus, first slice (document 3, issue 18): the permission to publish, and the schema registry.
--
-- events.publish is a system key (document 3, Authentication 3): the admin role holds it like every
-- non-platform system key, a member holds none.
INSERT INTO permissions (key, module, description) VALUES
  ('events.publish', 'system', 'Publish the events of installed modules to the event bus');

-- Tenants registered before this migration: their built-in admin role gets the key new tenants'
-- admin roles are created with (services/access/permissions.ts). The owner role holds '*'.
UPDATE roles SET permissions = permissions || ARRAY['events.publish']
WHERE built_in AND name = 'admin' AND tenant_id IS NOT NULL AND NOT ('events.publish' = ANY (permissions));

-- Every version of every event type's payload schema (services/events/schema-registry.ts). The
-- registry is platform-wide, like the module manifests the schemas come from: no tenant column and
-- no row-level security. A version is only ever added, after services/events/schema-compat.ts found
-- it backward compatible with the type's current one (the highest version); rows are never changed.
CREATE TABLE event_schemas (
  type           text NOT NULL CHECK (type ~ '^[a-z][a-z0-9_]*(\.[a-z0-9_]+){2,}$'),
  major          integer NOT NULL CHECK (major >= 0),
  minor          integer NOT NULL CHECK (minor >= 0),
  patch          integer NOT NULL CHECK (patch >= 0),
  -- JSON Schema in the registry's dialect; GetTopicSchema renders it as text.
  schema         jsonb NOT NULL CHECK (jsonb_typeof(schema) = 'object'),
  -- `kernel`, or `module:<slug>` for the schemas of a module's manifest.
  owner          text NOT NULL CHECK (owner = 'kernel' OR owner ~ '^module:[a-z][a-z0-9_]*$'),
  registered_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (type, major, minor, patch)
);

REVOKE UPDATE, DELETE ON event_schemas FROM platform_app;
