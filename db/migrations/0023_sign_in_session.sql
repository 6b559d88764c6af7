-- The end of a sign-in in one statement instead of two (api/identity/login.ts completeLogin): the
-- account's active tenants (auth_user_tenants) and, when one of them is chosen (the only one, or the
-- remembered one of several), the session in it (auth_issue_session) with its auth.user.logged_in event.
-- Runs after the password check, so it does not touch the equal work of the lookup before the hash.
--
-- Returns the tenants in auth_user_tenants' order, as a JSON array of {id, name, logoUrl, role}, and,
-- only when a session was opened, its tenant and the role names the access token will carry.
-- p_event holds outbox_events columns by name (common/events/publish.ts) for a tenant not known before
-- this statement: its tenant_id, the column and data.tenant_id, is set here to the chosen one.
CREATE FUNCTION auth_open_sign_in(
  p_user_id uuid, p_last_tenant_id uuid, p_refresh_id uuid, p_family_id uuid, p_token_hash bytea,
  p_ttl_seconds integer, p_event jsonb)
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
    p_event || jsonb_build_object('tenant_id', chosen, 'data', (p_event->'data') || jsonb_build_object('tenant_id', chosen)));
END $$;

REVOKE ALL ON FUNCTION auth_open_sign_in(uuid, uuid, uuid, uuid, bytea, integer, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_open_sign_in(uuid, uuid, uuid, uuid, bytea, integer, jsonb) TO platform_app;
