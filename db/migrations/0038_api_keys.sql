-- API keys (issue 35): service accounts of a tenant that call the API without a person's password.
-- A key acts for its tenant with exactly the permissions stored on its row (never through roles), so
-- the creator's later changes or deletion do not touch it (docs/decisions/identity.md, API keys).

INSERT INTO permissions (key, module, description) VALUES
  ('api_keys.manage', 'system', 'Create, list and revoke the tenant''s API keys');

-- Tenants registered before this migration: their built-in admin role gets the key new tenants'
-- admin roles are created with (services/access/permissions.ts). The owner role holds '*'.
UPDATE roles SET permissions = permissions || ARRAY['api_keys.manage']
WHERE built_in AND name = 'admin' AND tenant_id IS NOT NULL AND NOT ('api_keys.manage' = ANY (permissions));

CREATE TABLE api_keys (
  id            uuid PRIMARY KEY,
  tenant_id     uuid NOT NULL REFERENCES tenants (id),
  name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  -- The visible start of the key (`plat_` and the first characters of its random body), shown in
  -- listings so a person can tell keys apart and match a leaked one; it reveals too little to guess the rest.
  prefix        text NOT NULL CHECK (prefix ~ '^plat_[0-9A-Za-z]{8}$'),
  -- SHA-256 of the whole key. A fast hash is enough here, unlike for passwords: the secret is about 190
  -- random bits (services/identity/api-key-format.ts), so no guessing against a stolen hash can succeed,
  -- and an unsalted digest lets the gateway find the key by an index equality before a tenant is known.
  secret_hash   bytea NOT NULL CONSTRAINT api_keys_secret_hash UNIQUE CHECK (length(secret_hash) = 32),
  permissions   text[] NOT NULL,
  -- The actor ids of the audit trail: a user's id, or `apikey:<id>` when a key made or revoked the key.
  -- Text without a foreign key, so a key outlives its creator's account (soft-deleted or anonymized).
  created_by    text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz,
  last_used_at  timestamptz,
  revoked_at    timestamptz,
  revoked_by    text,
  CHECK ((revoked_at IS NULL) = (revoked_by IS NULL))
);
-- The tenant's listing, newest first by id (UUID v7), and its keyset pages.
CREATE INDEX api_keys_tenant ON api_keys (tenant_id, id);

ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON api_keys
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
-- Revocation keeps the row (the audit trail and GET /api-keys/{id} still name it); nothing in the
-- application removes one.
REVOKE DELETE ON api_keys FROM platform_app;

-- Authentication, before a tenant is known: the live key behind a hash, with what the gateway needs to
-- act for it. A revoked key, or one of a deleted tenant, is not found; expiry is left to the caller,
-- which checks it on every use (a key found here may be kept in the gateway's cache past its expiry).
CREATE FUNCTION auth_api_key_for_secret(p_secret_hash bytea)
RETURNS TABLE (id uuid, tenant_id uuid, permissions text[], expires_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT k.id, k.tenant_id, k.permissions, k.expires_at
  FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
  WHERE k.secret_hash = p_secret_hash AND k.revoked_at IS NULL AND t.deleted_at IS NULL
$$;
REVOKE ALL ON FUNCTION auth_api_key_for_secret(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_api_key_for_secret(bytea) TO platform_app;

-- Every change to what a key may do is announced: a notification on the channel api_key_changes with
-- the key's id, sent when the changing transaction commits, whoever writes it (the revoke route, an
-- operator's SQL). Every gateway drops the key from its cache of verified keys when it hears it
-- (api/runtime/verified-api-keys.ts), so a revoked key answers 401 on every gateway within a second.
-- Writing last_used_at alone is not announced: it changes nothing a gateway keeps.
CREATE FUNCTION api_key_announce() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('api_key_changes', OLD.id::text);
  ELSE
    PERFORM pg_notify('api_key_changes', NEW.id::text);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER api_keys_announce AFTER UPDATE ON api_keys
  FOR EACH ROW WHEN (
    OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
    OR OLD.permissions IS DISTINCT FROM NEW.permissions OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id
    OR OLD.secret_hash IS DISTINCT FROM NEW.secret_hash
  ) EXECUTE FUNCTION api_key_announce();
CREATE TRIGGER api_keys_announce_delete AFTER DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION api_key_announce();
