-- Instant revocation and the session list (docs/decisions/identity.md, Instant revocation and
-- sessions). A session is a refresh-token family (family_id); every access token names its session
-- in the `sid` claim (services/identity/tokens.ts).
--
-- 1. Every way a session ends is a refresh-token family being revoked, whoever writes it: logout,
--    DELETE /auth/sessions, the password reset (auth_revoke_user_refresh_tokens, 0011), reuse
--    detection, tenant termination, and, through the triggers of part 3, an account deleted or
--    locked and a membership blocked, deleted or removed. Each revocation is announced on the
--    channel session_revocations with the family id when its transaction commits (never when it
--    rolls back). PostgreSQL sends one notification per family and transaction however many rows
--    of the family changed. The gateways keep the ids they hear for the longest access-token
--    lifetime and refuse those tokens (api/runtime/session-revocations.ts).
-- 2. A gateway that starts, or listens again after a gap, reads the families revoked within that
--    lifetime (auth_revoked_sessions) after LISTEN took effect, so nothing falls between the two.
-- 3. Ending the account or the membership ends its sessions in the same transaction. The identity
--    routes already revoked them; the triggers make it hold for every writer (workflows, an
--    operator's SQL), so the gateway needs to know only one kind of revocation.
-- 4. The session list shows where a session was opened and last refreshed: every refresh token
--    stores the client address and user agent of the request that issued it.

ALTER TABLE refresh_tokens
  ADD COLUMN ip text CHECK (length(ip) <= 64),
  ADD COLUMN user_agent text CHECK (length(user_agent) <= 512);

-- auth_revoked_sessions reads by revocation time (the session list reads by user, the per-request
-- check by family: both indexed since 0002).
CREATE INDEX refresh_tokens_revoked_at ON refresh_tokens (revoked_at) WHERE revoked_at IS NOT NULL;

-- Part 1.
CREATE FUNCTION session_revocation_announce() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('session_revocations', OLD.family_id::text);
  RETURN NULL;
END $$;

CREATE TRIGGER refresh_tokens_revocation_announce AFTER UPDATE OF revoked_at ON refresh_tokens
  FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
  EXECUTE FUNCTION session_revocation_announce();
-- A live session whose rows are deleted has ended too.
CREATE TRIGGER refresh_tokens_revocation_announce_delete AFTER DELETE ON refresh_tokens
  FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND OLD.expires_at > now())
  EXECUTE FUNCTION session_revocation_announce();

-- Part 2: the families revoked within the last p_seconds, across tenants (a gateway serves them
-- all). It answers ids only, and only of sessions that are over.
CREATE FUNCTION auth_revoked_sessions(p_seconds integer)
RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT DISTINCT family_id FROM refresh_tokens WHERE revoked_at > now() - make_interval(secs => p_seconds)
$$;

REVOKE ALL ON FUNCTION auth_revoked_sessions(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_revoked_sessions(integer) TO platform_app;

-- Part 3. SECURITY DEFINER: an account is global and its sessions live in every tenant it belongs
-- to, while the change runs under one tenant's row-level security. These only take sessions away.
CREATE FUNCTION account_end_sessions() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  UPDATE refresh_tokens SET revoked_at = now(), successor_pair = NULL
  WHERE user_id = NEW.id AND revoked_at IS NULL;
  RETURN NULL;
END $$;

CREATE TRIGGER users_end_sessions AFTER UPDATE OF status, deleted_at ON users
  FOR EACH ROW WHEN ((OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL) OR (OLD.status <> 'locked' AND NEW.status = 'locked'))
  EXECUTE FUNCTION account_end_sessions();

CREATE FUNCTION membership_end_sessions() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  UPDATE refresh_tokens SET revoked_at = now(), successor_pair = NULL
  WHERE tenant_id = OLD.tenant_id AND user_id = OLD.user_id AND revoked_at IS NULL;
  RETURN NULL;
END $$;

CREATE TRIGGER memberships_end_sessions AFTER UPDATE OF status ON memberships
  FOR EACH ROW WHEN (OLD.status = 'active' AND NEW.status <> 'active')
  EXECUTE FUNCTION membership_end_sessions();
CREATE TRIGGER memberships_end_sessions_delete AFTER DELETE ON memberships
  FOR EACH ROW EXECUTE FUNCTION membership_end_sessions();

-- Part 4: the session functions of 0021 and 0023 take the client's address and user agent. The
-- old signatures stay, as wrappers storing neither, for the gateways of the previous release that
-- still run during a rolling deployment; a later migration drops them.
CREATE FUNCTION auth_issue_session(
  p_tenant_id uuid, p_user_id uuid, p_refresh_id uuid, p_family_id uuid, p_token_hash bytea,
  p_ttl_seconds integer, p_ends_at timestamptz, p_impersonator_id uuid, p_event jsonb, p_ip text, p_user_agent text)
RETURNS text[]
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  held text[];
BEGIN
  PERFORM auth_enter_tenant(p_tenant_id);
  SELECT g.roles INTO held FROM auth_user_grants(p_user_id) g;
  INSERT INTO refresh_tokens (id, family_id, user_id, tenant_id, token_hash, expires_at, impersonator_id, ip, user_agent)
  VALUES (p_refresh_id, p_family_id, p_user_id, p_tenant_id, p_token_hash,
          coalesce(p_ends_at, now() + make_interval(secs => p_ttl_seconds)), p_impersonator_id, p_ip, p_user_agent);
  IF p_event IS NOT NULL THEN
    INSERT INTO outbox_events (id, tenant_id, topic, partition_key, type, source, data, schema_version, trace_id, correlation_id)
    SELECT e.id, e.tenant_id, e.topic, e.partition_key, e.type, e.source, e.data, e.schema_version, e.trace_id, e.correlation_id
    FROM jsonb_populate_record(NULL::outbox_events, p_event) e;
  END IF;
  RETURN held;
END $$;

CREATE OR REPLACE FUNCTION auth_issue_session(
  p_tenant_id uuid, p_user_id uuid, p_refresh_id uuid, p_family_id uuid, p_token_hash bytea,
  p_ttl_seconds integer, p_ends_at timestamptz, p_impersonator_id uuid, p_event jsonb)
RETURNS text[]
LANGUAGE sql VOLATILE
AS $$
  SELECT auth_issue_session(p_tenant_id, p_user_id, p_refresh_id, p_family_id, p_token_hash, p_ttl_seconds, p_ends_at,
    p_impersonator_id, p_event, NULL::text, NULL::text)
$$;

CREATE FUNCTION auth_open_sign_in(
  p_user_id uuid, p_last_tenant_id uuid, p_refresh_id uuid, p_family_id uuid, p_token_hash bytea,
  p_ttl_seconds integer, p_event jsonb, p_ip text, p_user_agent text)
RETURNS TABLE (tenants jsonb, tenant_id uuid, roles text[])
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  listed jsonb;
  chosen uuid;
BEGIN
  SELECT coalesce(jsonb_agg(jsonb_build_object('id', t.id, 'name', t.name, 'logoUrl', t.logo_url, 'role', t.role) ORDER BY t.n), '[]')
    INTO listed
    FROM auth_user_tenants(p_user_id) WITH ORDINALITY AS t(id, name, logo_url, role, n);
  IF jsonb_array_length(listed) = 1 THEN
    chosen := (listed->0->>'id')::uuid;
  ELSIF listed @> jsonb_build_array(jsonb_build_object('id', p_last_tenant_id)) THEN
    chosen := p_last_tenant_id;
  END IF;
  IF chosen IS NULL THEN
    RETURN QUERY SELECT listed, NULL::uuid, NULL::text[];
    RETURN;
  END IF;
  RETURN QUERY SELECT listed, chosen, auth_issue_session(
    chosen, p_user_id, p_refresh_id, p_family_id, p_token_hash, p_ttl_seconds, NULL, NULL,
    p_event || jsonb_build_object('tenant_id', chosen, 'data', (p_event->'data') || jsonb_build_object('tenant_id', chosen)),
    p_ip, p_user_agent);
END $$;

CREATE OR REPLACE FUNCTION auth_open_sign_in(
  p_user_id uuid, p_last_tenant_id uuid, p_refresh_id uuid, p_family_id uuid, p_token_hash bytea,
  p_ttl_seconds integer, p_event jsonb)
RETURNS TABLE (tenants jsonb, tenant_id uuid, roles text[])
LANGUAGE sql VOLATILE
AS $$
  SELECT * FROM auth_open_sign_in(p_user_id, p_last_tenant_id, p_refresh_id, p_family_id, p_token_hash, p_ttl_seconds, p_event,
    NULL::text, NULL::text)
$$;

REVOKE ALL ON FUNCTION auth_issue_session(uuid, uuid, uuid, uuid, bytea, integer, timestamptz, uuid, jsonb, text, text),
  auth_open_sign_in(uuid, uuid, uuid, uuid, bytea, integer, jsonb, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_issue_session(uuid, uuid, uuid, uuid, bytea, integer, timestamptz, uuid, jsonb, text, text),
  auth_open_sign_in(uuid, uuid, uuid, uuid, bytea, integer, jsonb, text, text) TO platform_app;
