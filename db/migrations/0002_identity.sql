-- Identity: tenants, global user accounts, memberships, roles, role assignments, refresh tokens,
-- and the billing records every tenant has from its first second (plans, subscriptions).
--
-- Ownership (see docs/decisions.md, Identity):
--   tenant-owned, row-level security by app.tenant_id: tenants (its own row), memberships, roles,
--     user_roles, refresh_tokens, subscriptions.
--   global: users (one account, many tenants; visible to a tenant only through a membership),
--     plans (a read-only catalogue).
--   Requests that have no tenant yet (login by e-mail, refresh by token, the tenant list of a user)
--   go through the SECURITY DEFINER functions at the end of this file: each answers one narrow
--   question, so the gateway keeps running as platform_app and never holds the owner role.

CREATE TABLE tenants (
  id          uuid PRIMARY KEY,
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  -- 'platform' is the one tenant of the Platform Owner (created by the setup command).
  kind        text NOT NULL DEFAULT 'customer' CHECK (kind IN ('customer', 'platform')),
  logo_url    text,
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'blocked', 'suspended')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  deleted_at  timestamptz
);
CREATE UNIQUE INDEX tenants_one_platform ON tenants (kind) WHERE kind = 'platform';

CREATE TABLE users (
  id              uuid PRIMARY KEY,
  email           text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  password_hash   text,
  first_name      text NOT NULL DEFAULT '',
  last_name       text NOT NULL DEFAULT '',
  avatar_url      text,
  email_verified  boolean NOT NULL DEFAULT false,
  -- Two-factor (the second half of the identity issue): the secret is stored encrypted.
  mfa_enabled     boolean NOT NULL DEFAULT false,
  mfa_secret      bytea,
  status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'locked', 'pending_deletion')),
  -- The tenant a login selects by itself ("remember my choice"); cleared if the membership goes.
  last_tenant_id  uuid REFERENCES tenants (id) ON DELETE SET NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  deleted_at      timestamptz
);
-- One account per address whatever its case (citext would need an extension).
CREATE UNIQUE INDEX users_email_lower ON users (lower(email));

CREATE TABLE memberships (
  tenant_id   uuid NOT NULL REFERENCES tenants (id),
  user_id     uuid NOT NULL REFERENCES users (id),
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'blocked')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);

CREATE TABLE roles (
  id           uuid PRIMARY KEY,
  -- NULL only for platform-scoped roles (the Platform Owner role), which no tenant owns.
  tenant_id    uuid REFERENCES tenants (id),
  name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  description  text NOT NULL DEFAULT '',
  permissions  text[] NOT NULL DEFAULT '{}',
  scope        text NOT NULL DEFAULT 'tenant' CHECK (scope IN ('tenant', 'platform')),
  built_in     boolean NOT NULL DEFAULT false,
  created_by   uuid REFERENCES users (id),
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  CHECK ((scope = 'platform') = (tenant_id IS NULL))
);
CREATE UNIQUE INDEX roles_tenant_name ON roles (tenant_id, name) WHERE tenant_id IS NOT NULL;
CREATE UNIQUE INDEX roles_platform_name ON roles (name) WHERE tenant_id IS NULL;

CREATE TABLE user_roles (
  tenant_id   uuid NOT NULL,
  user_id     uuid NOT NULL,
  role_id     uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, user_id, role_id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES memberships (tenant_id, user_id) ON DELETE CASCADE
);

-- Refresh tokens: only the SHA-256 of the token is stored. A family is one login's chain of
-- rotations; reuse of a rotated token outside the grace window revokes the whole family.
-- successor_pair is the token pair issued when this token was rotated, encrypted with a key derived
-- from this token itself (AES-256-GCM): a concurrent duplicate refresh within the grace window,
-- which presents the same token, can decrypt it and receives the identical pair, while the
-- database alone (which never holds the token) cannot.
CREATE TABLE refresh_tokens (
  id              uuid PRIMARY KEY,
  family_id       uuid NOT NULL,
  user_id         uuid NOT NULL REFERENCES users (id),
  tenant_id       uuid NOT NULL REFERENCES tenants (id),
  token_hash      bytea NOT NULL UNIQUE,
  replaced_by     uuid REFERENCES refresh_tokens (id),
  successor_pair  bytea,
  rotated_at      timestamptz,
  revoked_at      timestamptz,
  expires_at      timestamptz NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);
CREATE INDEX refresh_tokens_expires_at ON refresh_tokens (expires_at);

-- Plans: the catalogue of DECISIONS.md (limits 0 = unlimited). Money limits in minor units.
CREATE TABLE plans (
  id          text PRIMARY KEY CHECK (id ~ '^[a-z][a-z0-9_-]*$'),
  name        text NOT NULL,
  interval    text NOT NULL DEFAULT 'monthly' CHECK (interval IN ('monthly', 'yearly')),
  price       bigint NOT NULL CHECK (price >= 0),
  currency    text NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$'),
  limits      jsonb NOT NULL,
  features    text[] NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now()
);

INSERT INTO plans (id, name, price, limits, features) VALUES
  ('free', 'Free', 0,
   '{"users": 2, "records": 1000, "storageBytes": 104857600, "eventsPerDay": 1000, "modules": 1, "maxTxAmount": 10000000, "maxBalance": 100000000}',
   '{}'),
  ('starter', 'Starter', 1900,
   '{"users": 5, "records": 10000, "storageBytes": 1073741824, "eventsPerDay": 10000, "modules": 3, "maxTxAmount": 10000000, "maxBalance": 100000000}',
   '{email_support}'),
  ('pro', 'Pro', 9900,
   '{"users": 50, "records": 1000000, "storageBytes": 53687091200, "eventsPerDay": 1000000, "modules": 20, "maxTxAmount": 10000000, "maxBalance": 100000000}',
   '{email_support,audit_export}'),
  ('enterprise', 'Enterprise', 0,
   '{"users": 0, "records": 0, "storageBytes": 0, "eventsPerDay": 0, "modules": 0, "maxTxAmount": 10000000, "maxBalance": 100000000}',
   '{email_support,audit_export,sso}');

-- One subscription per tenant (document 1: a tenant never has an undefined subscription state).
CREATE TABLE subscriptions (
  id                    uuid PRIMARY KEY,
  tenant_id             uuid NOT NULL UNIQUE REFERENCES tenants (id),
  plan_id               text NOT NULL REFERENCES plans (id),
  status                text NOT NULL CHECK (status IN ('trialing', 'active', 'past_due', 'suspended', 'terminated', 'canceled')),
  version               integer NOT NULL DEFAULT 1,
  trial_ends_at         timestamptz,
  current_period_start  timestamptz NOT NULL,
  current_period_end    timestamptz NOT NULL,
  cancel_at_period_end  boolean NOT NULL DEFAULT false,
  pending_change        jsonb,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);

-- Row-level security.
ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenants
  USING (id = current_tenant_id()) WITH CHECK (id = current_tenant_id());

ALTER TABLE memberships ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memberships
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

ALTER TABLE user_roles ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON user_roles
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

ALTER TABLE refresh_tokens ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON refresh_tokens
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

ALTER TABLE subscriptions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON subscriptions
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

-- A tenant's own roles. Platform-scoped roles (tenant_id NULL) are readable only inside the platform
-- tenant, where the Platform Owner holds one, and never writable by the application: they are
-- created by the setup command as the owner role.
ALTER TABLE roles ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_read ON roles FOR SELECT USING (
  tenant_id = current_tenant_id()
  OR (tenant_id IS NULL AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = current_tenant_id() AND t.kind = 'platform'))
);
CREATE POLICY tenant_insert ON roles FOR INSERT WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_update ON roles FOR UPDATE
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_delete ON roles FOR DELETE USING (tenant_id = current_tenant_id());

-- Users are global. A tenant sees and changes the accounts of its members only. Creating an
-- account is allowed in any tenant transaction (registration, invitations): the account is
-- invisible to that tenant until its membership row exists, so callers insert without RETURNING.
ALTER TABLE users ENABLE ROW LEVEL SECURITY;
CREATE POLICY member_read ON users FOR SELECT USING (
  EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = users.id AND m.tenant_id = current_tenant_id())
);
CREATE POLICY member_update ON users FOR UPDATE USING (
  EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = users.id AND m.tenant_id = current_tenant_id())
);
CREATE POLICY create_in_tenant ON users FOR INSERT WITH CHECK (current_tenant_id() IS NOT NULL);
REVOKE DELETE ON users FROM platform_app; -- accounts are soft-deleted

-- The plan catalogue is read by everyone and changed by operators only.
REVOKE INSERT, UPDATE, DELETE ON plans FROM platform_app;

-- Lookups that happen before a tenant is known. SECURITY DEFINER runs them as the owner (not subject
-- to row-level security); each returns only what its one caller needs. search_path is pinned so a
-- caller cannot substitute objects.

-- Login: the account behind an e-mail address, whatever its tenants.
CREATE FUNCTION auth_user_for_login(p_email text)
RETURNS TABLE (id uuid, email text, password_hash text, status text, deleted_at timestamptz,
               mfa_enabled boolean, last_tenant_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT u.id, u.email, u.password_hash, u.status, u.deleted_at, u.mfa_enabled, u.last_tenant_id
  FROM users u WHERE lower(u.email) = lower(p_email)
$$;

-- Tenant selection and GET /auth/tenants: the active tenants of one user, with the name of the
-- most important role the user holds in each (owner, then admin, then any other, member last).
CREATE FUNCTION auth_user_tenants(p_user_id uuid)
RETURNS TABLE (id uuid, name text, logo_url text, role text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT t.id, t.name, t.logo_url,
         (SELECT r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id
          WHERE ur.tenant_id = t.id AND ur.user_id = p_user_id
          ORDER BY CASE r.name WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 WHEN 'member' THEN 3 ELSE 2 END, r.name
          LIMIT 1) AS role
  FROM memberships m JOIN tenants t ON t.id = m.tenant_id
  WHERE m.user_id = p_user_id AND m.status = 'active' AND t.deleted_at IS NULL
  ORDER BY t.created_at, t.id
$$;

-- Refresh and logout: the tenant a refresh token belongs to, found by its hash. The rotation itself
-- then runs under that tenant's row-level security.
CREATE FUNCTION auth_refresh_token_tenant(p_token_hash bytea)
RETURNS uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT tenant_id FROM refresh_tokens WHERE token_hash = p_token_hash
$$;

REVOKE ALL ON FUNCTION auth_user_for_login(text), auth_user_tenants(uuid), auth_refresh_token_tenant(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_user_for_login(text), auth_user_tenants(uuid), auth_refresh_token_tenant(bytea) TO platform_app;
