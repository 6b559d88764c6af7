-- User administration (document 1, Users) and impersonation (Authentication and sessions).
--
-- Soft delete is a fact about a membership, because accounts are global and memberships are per
-- tenant (docs/decisions.md, Identity): DELETE /users/:id in one tenant must not take the account
-- away from the other tenants it belongs to. A deleted membership keeps its row (and its role
-- assignments), so restore brings everything back; the status 'deleted' makes every existing
-- "active member" check (login, tenant selection, refresh, switch-tenant) refuse it without change.
-- The account itself gets users.deleted_at once none of its memberships is live any more, so a
-- login then fails as for a deleted account (see api/identity/users/).

ALTER TABLE memberships DROP CONSTRAINT memberships_status_check;
ALTER TABLE memberships ADD CONSTRAINT memberships_status_check CHECK (status IN ('active', 'blocked', 'deleted'));
ALTER TABLE memberships ADD COLUMN deleted_at timestamptz;
ALTER TABLE memberships ADD CONSTRAINT memberships_deleted_marker CHECK ((status = 'deleted') = (deleted_at IS NOT NULL));

-- The account-level questions a tenant may ask about one of its members, answered across tenants
-- (row-level security hides the other memberships): in how many other tenants the account is a
-- member (account-wide changes such as the e-mail are left to a tenant that is the account's only
-- one), and how many memberships are still live (the account is soft-deleted when none is).
-- It answers only for a member of the caller's tenant, and only counts.
CREATE FUNCTION users_account_reach(p_user_id uuid)
RETURNS TABLE (other_tenants integer, live_memberships integer)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT count(*) FILTER (WHERE m.tenant_id <> current_tenant_id())::integer,
         count(*) FILTER (WHERE m.status <> 'deleted')::integer
  FROM memberships m
  WHERE m.user_id = p_user_id
    AND EXISTS (SELECT 1 FROM memberships own WHERE own.user_id = p_user_id AND own.tenant_id = current_tenant_id())
$$;

REVOKE ALL ON FUNCTION users_account_reach(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION users_account_reach(uuid) TO platform_app;

-- Impersonation sessions: the Platform Owner acting as a user of a tenant. Its refresh tokens
-- remember who impersonates, so a rotation keeps the `act` claim, and they expire with the
-- impersonation (one hour), never later.
ALTER TABLE refresh_tokens ADD COLUMN impersonator_id uuid REFERENCES users (id);
