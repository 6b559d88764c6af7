-- Foundation: grants for the application role, tenant isolation by row-level security, the
-- transactional outbox, idempotency keys, one-time tokens and feature flags.
--
-- Roles (created by the bring-up scripts, see infra/postgres/init.sql):
--   platform_owner  owns every table and runs migrations; system processes that work across tenants
--                   (outbox relay, maintenance) connect as it, because a table owner is not subject to
--                   row-level security unless the table FORCEs it.
--   platform_app    the gateway's role: no superuser, no BYPASSRLS; sees only the rows of the tenant
--                   named by the transaction-local setting app.tenant_id, which only db/tenant.ts sets
--                   from the verified token.

GRANT USAGE ON SCHEMA public TO platform_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO platform_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO platform_app;

-- The tenant of the current transaction, or NULL when none was set (then every policy is false).
CREATE FUNCTION current_tenant_id() RETURNS uuid
  LANGUAGE sql STABLE
  AS $$ SELECT nullif(current_setting('app.tenant_id', true), '')::uuid $$;

-- Transactional outbox (document 3 envelope). Written in the same transaction as the business
-- change; workers/outbox-relay.ts publishes rows in seq order and stamps published_at.
CREATE TABLE outbox_events (
  seq            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id             uuid NOT NULL UNIQUE,
  tenant_id      uuid NOT NULL,
  topic          text NOT NULL CHECK (topic ~ '^platform\.[a-z]+\.events$'),
  partition_key  text NOT NULL,
  type           text NOT NULL CHECK (type ~ '^[a-z][a-z0-9_]*(\.[a-z0-9_]+){2,}$'),
  source         text NOT NULL,
  data           jsonb NOT NULL,
  schema_version text NOT NULL DEFAULT '1.0.0' CHECK (schema_version ~ '^\d+\.\d+\.\d+$'),
  trace_id       text,
  correlation_id text,
  occurred_at    timestamptz NOT NULL DEFAULT now(),
  published_at   timestamptz
);
CREATE INDEX outbox_events_pending ON outbox_events (seq) WHERE published_at IS NULL;
CREATE INDEX outbox_events_published_at ON outbox_events (published_at) WHERE published_at IS NOT NULL;

-- Wakes the relay at once instead of waiting for its idle poll.
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('outbox_events', '');
  RETURN NULL;
END $$;
CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events
  FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();

-- Idempotency keys, scoped per tenant and route, stored with a hash of the request so the same key
-- with another body is a conflict, and with the response so a retry gets the same answer.
CREATE TABLE idempotency_keys (
  tenant_id       uuid NOT NULL,
  scope           text NOT NULL,
  key             text NOT NULL,
  request_hash    text NOT NULL,
  response_status integer,
  response_body   jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, scope, key)
);
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);

-- One-time tokens (verification, reset, invite): only a hash is stored. They are redeemed by
-- unauthenticated requests that carry no tenant, so they are looked up by hash, not by tenant.
CREATE TABLE one_time_tokens (
  id          uuid PRIMARY KEY,
  purpose     text NOT NULL CHECK (purpose IN ('verify_email', 'reset_password', 'invite')),
  token_hash  bytea NOT NULL UNIQUE,
  user_id     uuid,
  tenant_id   uuid,
  email       text,
  payload     jsonb NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL
);
CREATE INDEX one_time_tokens_expires_at ON one_time_tokens (expires_at);

-- Feature flags: global rows (tenant_id NULL) and per-tenant overrides. The gateway loads the
-- global set at start-up; /ready waits for it.
CREATE TABLE feature_flags (
  key         text NOT NULL CHECK (key ~ '^[a-z][a-z0-9_.-]*$'),
  tenant_id   uuid,
  enabled     boolean NOT NULL,
  description text NOT NULL DEFAULT '',
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX feature_flags_key_tenant ON feature_flags (key, coalesce(tenant_id, '00000000-0000-0000-0000-000000000000'));

INSERT INTO feature_flags (key, enabled, description) VALUES
  ('billing.enforcement', true, 'Plan and subscription limits are enforced by the gateway');

-- Row-level security: a tenant sees and writes only its own rows.
ALTER TABLE outbox_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON outbox_events
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON idempotency_keys
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

ALTER TABLE feature_flags ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON feature_flags FOR SELECT
  USING (tenant_id IS NULL OR tenant_id = current_tenant_id());
-- The application may read flags but not change them; operators change them as the owner.
REVOKE INSERT, UPDATE, DELETE ON feature_flags FROM platform_app;

-- one_time_tokens are not tenant-owned (see above); the application reaches them only by hash.
