-- Identity security flows (document 1, Security flows): e-mail verification, password reset,
-- invitations and the set-password link of POST /users.
--
-- One-time tokens stay where migration 0001 put them (one_time_tokens, reached by hash, not by
-- tenant). Every token these flows issue names the tenant it was issued in, and is redeemed inside
-- that tenant's transaction, so what a redemption changes is again under row-level security.

-- POST /users creates an account without a password and e-mails a link to set one (DECISIONS.md);
-- its token is redeemed like a reset, but is a purpose of its own so it can carry the invite TTL and
-- be told apart in the table.
ALTER TABLE one_time_tokens DROP CONSTRAINT one_time_tokens_purpose_check;
ALTER TABLE one_time_tokens ADD CONSTRAINT one_time_tokens_purpose_check
  CHECK (purpose IN ('verify_email', 'reset_password', 'invite', 'set_password'));

-- reset-password ends every session of the account (document 1, Security flows rule 4). Refresh
-- tokens are tenant-owned, and an account may have sessions in many tenants, while the reset runs
-- in one; this function revokes them all and answers how many it revoked. It only ever takes
-- sessions away, so the most a caller could do with it is sign someone out.
CREATE FUNCTION auth_revoke_user_refresh_tokens(p_user_id uuid)
RETURNS integer
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  WITH revoked AS (
    UPDATE refresh_tokens SET revoked_at = now(), successor_pair = NULL
    WHERE user_id = p_user_id AND revoked_at IS NULL
    RETURNING 1
  )
  SELECT count(*)::integer FROM revoked
$$;

REVOKE ALL ON FUNCTION auth_revoke_user_refresh_tokens(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_revoke_user_refresh_tokens(uuid) TO platform_app;
