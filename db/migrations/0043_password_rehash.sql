-- Password hashes made again at sign-in (docs/decisions/identity.md, Password pepper; ASVS 2.4.5): a hash
-- made before the pepper, or with other Argon2id parameters, is replaced by a current one once a sign-in
-- has verified the password (services/identity/login.ts). Sign-in runs before any tenant is known, and
-- row-level security lets a transaction change only the accounts of its tenant's members, so, like
-- auth_user_for_login (migration 0002), this function acts as its definer. It replaces only the exact
-- hash the sign-in has just read and verified, so a password changed meanwhile (a reset, a change) is
-- kept, and only by another Argon2id hash, so it can neither clear a password nor store anything else.
-- updated_at stays: the password is the same.
CREATE FUNCTION auth_upgrade_password_hash(p_user_id uuid, p_verified_hash text, p_new_hash text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
  UPDATE users SET password_hash = p_new_hash
  WHERE id = p_user_id AND password_hash = p_verified_hash AND deleted_at IS NULL
    AND p_new_hash LIKE '$argon2id$%';
  RETURN FOUND;
END $$;

REVOKE ALL ON FUNCTION auth_upgrade_password_hash(uuid, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_upgrade_password_hash(uuid, text, text) TO platform_app;
