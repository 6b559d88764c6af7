-- Identity in fewer round trips (issue 3, Performance). A login's session used six statements
-- (BEGIN, set_config, the grants, the refresh token, the outbox event, COMMIT) and GET /auth/me four;
-- each round trip costs the gateway a socket write and read plus the driver's work, and PostgreSQL a
-- protocol cycle. The functions below do the same work in one statement each.
--
-- They are SECURITY INVOKER: they run as platform_app under row-level security exactly as the
-- statements did inside withTenant (db/tenant.ts). That needs app.tenant_id, so auth_enter_tenant
-- sets it transaction-locally, as withTenant does; called alone, the statement is its own
-- transaction and the setting ends with it. The tenant id always comes from a verified token or a
-- membership just read, as for withTenant. Like the statements they replace, they take the caller's
-- search_path and carry no SET clause (which would also keep PostgreSQL from inlining
-- auth_user_grants into the statement that calls it).

-- Sets the transaction's tenant, or confirms it: inside a transaction already bound to another
-- tenant it refuses, so a function called from withTenant can never move the rest of that
-- transaction to a different tenant.
CREATE FUNCTION auth_enter_tenant(p_tenant_id uuid)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
  IF p_tenant_id IS NULL THEN
    RAISE EXCEPTION 'auth_enter_tenant needs a tenant id';
  END IF;
  IF current_tenant_id() IS NOT NULL AND current_tenant_id() <> p_tenant_id THEN
    RAISE EXCEPTION 'the transaction belongs to another tenant';
  END IF;
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
END $$;

-- What a user may do in the transaction's tenant: the names of the roles held now and the union of
-- their permissions, without the keys the tenant has archived (an uninstalled module's keys grant
-- nothing). Row-level security keeps both to the tenant, and inside the platform tenant includes the
-- Platform Owner's platform-scoped role. A user without roles (or not a member) gets two empty
-- lists. The one definition behind effectivePermissions (db/queries/identity/roles.queries.ts, which
-- serves the gateway's permission cache) and the two functions below.
CREATE FUNCTION auth_user_grants(p_user_id uuid)
RETURNS TABLE (roles text[], permissions text[])
LANGUAGE sql STABLE
AS $$
  WITH held AS (
    SELECT r.name, r.permissions FROM user_roles ur JOIN roles r ON r.id = ur.role_id
    WHERE ur.user_id = p_user_id AND ur.tenant_id = current_tenant_id()
  )
  SELECT coalesce((SELECT array_agg(DISTINCT h.name ORDER BY h.name) FROM held h), '{}'),
         coalesce((SELECT array_agg(DISTINCT p ORDER BY p) FROM held h, unnest(h.permissions) p
                   WHERE NOT EXISTS (SELECT 1 FROM public.permissions a
                                     WHERE a.tenant_id = current_tenant_id() AND a.key = p AND a.archived_at IS NOT NULL)),
                  '{}')
$$;

-- GET /auth/me: the account as a member of the tenant (no row when it is none: member_read on users)
-- with its grants, read now.
CREATE FUNCTION auth_me(p_tenant_id uuid, p_user_id uuid)
RETURNS TABLE (id uuid, email text, first_name text, last_name text, avatar_url text, email_verified boolean,
               mfa_enabled boolean, status text, created_at timestamptz, updated_at timestamptz,
               deleted_at timestamptz, roles text[], permissions text[])
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
  PERFORM auth_enter_tenant(p_tenant_id);
  RETURN QUERY
    SELECT u.id, u.email, u.first_name, u.last_name, u.avatar_url, u.email_verified, u.mfa_enabled, u.status,
           u.created_at, u.updated_at, u.deleted_at, g.roles, g.permissions
    FROM users u CROSS JOIN LATERAL auth_user_grants(u.id) g
    WHERE u.id = p_user_id;
END $$;

-- A session's token pair (api/identity/sessions.ts issuePair): answers the role names the access
-- token will carry and stores the refresh token (by hash) in the same statement; with p_event, also
-- the outbox row of the event that reports it (auth.user.logged_in), so the event commits if and only
-- if the session does. p_event holds outbox_events columns by name, built and checked by
-- common/events/publish.ts. Expiry: the impersonation's end, else now + p_ttl_seconds.
CREATE FUNCTION auth_issue_session(
  p_tenant_id uuid, p_user_id uuid, p_refresh_id uuid, p_family_id uuid, p_token_hash bytea,
  p_ttl_seconds integer, p_ends_at timestamptz, p_impersonator_id uuid, p_event jsonb)
RETURNS text[]
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  held text[];
BEGIN
  PERFORM auth_enter_tenant(p_tenant_id);
  SELECT g.roles INTO held FROM auth_user_grants(p_user_id) g;
  INSERT INTO refresh_tokens (id, family_id, user_id, tenant_id, token_hash, expires_at, impersonator_id)
  VALUES (p_refresh_id, p_family_id, p_user_id, p_tenant_id, p_token_hash,
          coalesce(p_ends_at, now() + make_interval(secs => p_ttl_seconds)), p_impersonator_id);
  IF p_event IS NOT NULL THEN
    INSERT INTO outbox_events (id, tenant_id, topic, partition_key, type, source, data, schema_version, trace_id, correlation_id)
    SELECT e.id, e.tenant_id, e.topic, e.partition_key, e.type, e.source, e.data, e.schema_version, e.trace_id, e.correlation_id
    FROM jsonb_populate_record(NULL::outbox_events, p_event) e;
  END IF;
  RETURN held;
END $$;

REVOKE ALL ON FUNCTION auth_enter_tenant(uuid), auth_user_grants(uuid), auth_me(uuid, uuid),
  auth_issue_session(uuid, uuid, uuid, uuid, bytea, integer, timestamptz, uuid, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_enter_tenant(uuid), auth_user_grants(uuid), auth_me(uuid, uuid),
  auth_issue_session(uuid, uuid, uuid, uuid, bytea, integer, timestamptz, uuid, jsonb) TO platform_app;
