-- External sign-in identities (document 1, Auth provider link): the subject of an OpenID Connect
-- provider, linked to one account.
--
-- Ownership (see docs/decisions.md, Identity): global like users, because an account is global and
-- so are its ways to sign in. A tenant sees and changes the links of its members only, exactly as it
-- sees their accounts. Sign-in by provider happens before any tenant is known: the SECURITY DEFINER
-- functions at the end of this file answer those lookups, one narrow question each, so the gateway
-- keeps running as platform_app.

CREATE TABLE user_identities (
  id             uuid PRIMARY KEY,
  user_id        uuid NOT NULL REFERENCES users (id),
  -- The provider's id in AUTH_PROVIDERS. Providers are deployment settings, not rows: a link whose
  -- provider was removed from the configuration stays (it comes back with the provider).
  provider_id    text NOT NULL CHECK (provider_id ~ '^[a-z0-9][a-z0-9_-]{0,39}$'),
  provider_type  text NOT NULL DEFAULT 'oidc' CHECK (provider_type IN ('oidc')),
  -- The ID token's `sub`: stable and unique per issuer (OpenID Connect Core 2), unlike the e-mail,
  -- which the provider may reassign. Sign-in finds the account by this, never by the address.
  external_id    text NOT NULL CHECK (length(external_id) BETWEEN 1 AND 255),
  -- What the provider said when the link was made (shown in the list of links).
  email          text,
  display_name   text,
  linked_at      timestamptz NOT NULL DEFAULT now(),
  -- Document 1: the pair is unique across all users (409 provider-already-linked, mapped in
  -- api/http/constraint-problems.ts).
  CONSTRAINT user_identities_provider_subject UNIQUE (provider_id, external_id),
  -- One identity per provider and account: unlinking names the provider only.
  CONSTRAINT user_identities_user_provider UNIQUE (user_id, provider_id)
);

-- Row-level security: the links of the tenant's members (the same rule as users' member_read).
-- Inserting needs the membership too, so an account is linked only inside one of its tenants.
ALTER TABLE user_identities ENABLE ROW LEVEL SECURITY;
CREATE POLICY member_access ON user_identities
  USING (EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = user_identities.user_id AND m.tenant_id = current_tenant_id()))
  WITH CHECK (EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = user_identities.user_id AND m.tenant_id = current_tenant_id()));
-- A link is made or removed, never rewritten to another account or subject.
REVOKE UPDATE ON user_identities FROM platform_app;

-- Sign-in by provider: the account linked to a provider subject, with what login needs to decide.
CREATE FUNCTION auth_identity_user(p_provider_id text, p_external_id text)
RETURNS TABLE (id uuid, email text, email_verified boolean, status text, deleted_at timestamptz,
               mfa_enabled boolean, last_tenant_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT u.id, u.email, u.email_verified, u.status, u.deleted_at, u.mfa_enabled, u.last_tenant_id
  FROM user_identities i JOIN users u ON u.id = i.user_id
  WHERE i.provider_id = p_provider_id AND i.external_id = p_external_id
$$;

-- First sign-in of a subject: the account that already holds the provider's address, if any. Unlike
-- auth_user_for_login it returns whether the address is verified here, because only a verified
-- address on both sides may link the two (docs/decisions.md); no password hash is needed.
CREATE FUNCTION auth_user_for_provider_email(p_email text)
RETURNS TABLE (id uuid, email text, email_verified boolean, status text, deleted_at timestamptz,
               mfa_enabled boolean, last_tenant_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT u.id, u.email, u.email_verified, u.status, u.deleted_at, u.mfa_enabled, u.last_tenant_id
  FROM users u WHERE lower(u.email) = lower(p_email)
$$;

REVOKE ALL ON FUNCTION auth_identity_user(text, text), auth_user_for_provider_email(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_identity_user(text, text), auth_user_for_provider_email(text) TO platform_app;
