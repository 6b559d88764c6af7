-- Two-factor authentication and recovery (document 1, Two-factor authentication; issue 3).
--
-- users.mfa_secret (migration 0002) holds the TOTP secret sealed with AES-256-GCM under
-- MFA_ENCRYPTION_KEY (api/identity/mfa/secret-crypto.ts); while mfa_enabled is false it is a pending
-- setup that /auth/mfa/verify activates. This migration adds:
--   users.mfa_last_step     the RFC 6238 time step of the last accepted code: a code is accepted only
--                           for a later step, so a code cannot be replayed within its window.
--   users.mfa_reset_until   set by a successful /auth/recovery: until then /auth/mfa/disable needs the
--                           password only (the user has lost the authenticator).
--   recovery_codes          only a keyed hash (HMAC-SHA256) of each code; a used code is deleted.
--   recovery_failures       failed recovery attempts per account. Kept here, not in Redis, because the
--                           count decides a lasting state change (the account lock) and must survive a
--                           Redis restart and commit together with that change and its audit record.
--
-- Ownership: these rows belong to a global account, not to a tenant. As for users, a tenant reaches
-- them only for its members (row-level security through memberships); the application only ever asks
-- for the caller's own account. Login, which runs before a tenant is known, uses the two SECURITY
-- DEFINER functions at the end.

ALTER TABLE users
  ADD COLUMN mfa_last_step bigint CHECK (mfa_last_step >= 0),
  ADD COLUMN mfa_reset_until timestamptz;

CREATE TABLE recovery_codes (
  id          uuid PRIMARY KEY,
  user_id     uuid NOT NULL REFERENCES users (id),
  -- HMAC-SHA256 keyed by the server and bound to the user id: a copy of this table alone cannot be
  -- searched offline for the (50+ bit) codes.
  code_hash   bytea NOT NULL UNIQUE CHECK (length(code_hash) = 32),
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX recovery_codes_user ON recovery_codes (user_id);

CREATE TABLE recovery_failures (
  user_id            uuid PRIMARY KEY REFERENCES users (id),
  -- The current 15-minute window: when it started and the failures in it.
  window_started_at  timestamptz NOT NULL DEFAULT now(),
  window_failures    integer NOT NULL DEFAULT 0 CHECK (window_failures >= 0),
  -- Failures since the last successful recovery; at RECOVERY_ACCOUNT_LOCK_FAILURES the account locks.
  total_failures     integer NOT NULL DEFAULT 0 CHECK (total_failures >= 0),
  -- The one-hour lock of recovery for this account after RECOVERY_MAX_ATTEMPTS failures.
  locked_until       timestamptz,
  updated_at         timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE recovery_codes ENABLE ROW LEVEL SECURITY;
CREATE POLICY member_access ON recovery_codes USING (
  EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = recovery_codes.user_id AND m.tenant_id = current_tenant_id())
);
-- Codes are only created and deleted, never changed.
REVOKE UPDATE ON recovery_codes FROM platform_app;

ALTER TABLE recovery_failures ENABLE ROW LEVEL SECURITY;
CREATE POLICY member_access ON recovery_failures USING (
  EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = recovery_failures.user_id AND m.tenant_id = current_tenant_id())
);

-- Login with two-factor on: the sealed secret and the last accepted step of an account whose
-- password was just verified.
CREATE FUNCTION auth_user_mfa(p_user_id uuid)
RETURNS TABLE (secret bytea, last_step bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT u.mfa_secret, u.mfa_last_step FROM users u
  WHERE u.id = p_user_id AND u.mfa_enabled AND u.mfa_secret IS NOT NULL
$$;

-- Claims a time step for an accepted code: true only if it is later than the last accepted one, so
-- of two concurrent requests with the same code exactly one wins. A step more than one period ahead
-- of the database clock is refused, so no caller can push the counter forward and block every code.
CREATE FUNCTION auth_mfa_claim_step(p_user_id uuid, p_step bigint)
RETURNS boolean
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  WITH claimed AS (
    UPDATE users SET mfa_last_step = p_step
    WHERE id = p_user_id AND mfa_secret IS NOT NULL
      AND (mfa_last_step IS NULL OR mfa_last_step < p_step)
      AND p_step <= floor(extract(epoch FROM now()) / 30) + 1
    RETURNING 1
  )
  SELECT EXISTS (SELECT 1 FROM claimed)
$$;

REVOKE ALL ON FUNCTION auth_user_mfa(uuid), auth_mfa_claim_step(uuid, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_user_mfa(uuid), auth_mfa_claim_step(uuid, bigint) TO platform_app;
