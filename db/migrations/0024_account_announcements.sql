-- Every change to an account or to one of its memberships is announced: a notification on the
-- channel account_changes with the account's id, sent when the changing transaction commits (never
-- when it rolls back), whoever writes it: the gateway's identity routes, workflows (anonymization,
-- tenant termination), an operator's SQL. A gateway keeps its GET /auth/me answers while it hears
-- these and the tenants' RBAC versions (0020), and drops an account's answers when it is announced
-- (api/identity/me-cache.ts). An update that changes nothing is not announced; PostgreSQL sends
-- one notification per account and transaction however many rows changed.
CREATE FUNCTION account_announce() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  changed jsonb;
BEGIN
  IF TG_OP = 'DELETE' THEN changed := to_jsonb(OLD); ELSE changed := to_jsonb(NEW); END IF;
  -- TG_ARGV[0] names the column holding the account's id: id in users, user_id in memberships.
  PERFORM pg_notify('account_changes', changed ->> TG_ARGV[0]);
  RETURN NULL;
END $$;

CREATE TRIGGER users_account_announce AFTER UPDATE ON users
  FOR EACH ROW WHEN (OLD IS DISTINCT FROM NEW) EXECUTE FUNCTION account_announce('id');
CREATE TRIGGER users_account_announce_delete AFTER DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION account_announce('id');
CREATE TRIGGER memberships_account_announce AFTER INSERT OR UPDATE OR DELETE ON memberships
  FOR EACH ROW EXECUTE FUNCTION account_announce('user_id');
