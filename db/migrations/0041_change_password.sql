-- POST /auth/change-password (docs/reference/identity.md, Rules: password change and security mail; ASVS 2.1.6): a
-- signed-in user who changes the password keeps the session they changed it from, and every other session of the
-- account ends, in every tenant. Refresh tokens are tenant-owned and the change runs in one tenant's
-- transaction, so, like auth_revoke_user_refresh_tokens (migration 0011), this function reaches the
-- others as their definer. It only ever takes sessions away. Each family it revokes is announced by
-- the trigger of migration 0039, so the gateways refuse those access tokens too.
CREATE FUNCTION auth_revoke_other_refresh_tokens(p_user_id uuid, p_keep_family uuid)
RETURNS integer
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  WITH revoked AS (
    UPDATE refresh_tokens SET revoked_at = now(), successor_pair = NULL
    WHERE user_id = p_user_id AND revoked_at IS NULL AND family_id IS DISTINCT FROM p_keep_family
    RETURNING family_id
  )
  SELECT count(DISTINCT family_id)::integer FROM revoked
$$;

REVOKE ALL ON FUNCTION auth_revoke_other_refresh_tokens(uuid, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_revoke_other_refresh_tokens(uuid, uuid) TO platform_app;
