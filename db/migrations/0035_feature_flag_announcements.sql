-- Every change to feature_flags is announced: a notification on the channel feature_flags, sent when
-- the changing transaction commits (never when it rolls back), whoever writes it (an operator's SQL
-- as the owner; the application role cannot write flags, 0001). A gateway reloads its flags when it
-- hears one, so every gateway behind the load balancer applies a change within a second instead of
-- at its next interval reload (api/runtime/flag-cache.ts). The trigger is per statement and the
-- payload empty: the gateway reloads the whole global set anyway, and PostgreSQL folds identical
-- notifications of one transaction into one, so a transaction costs each gateway one reload however
-- many rows it changed. A change of a per-tenant override is announced too (one needless reload of
-- the global set): telling them apart would need transition tables, which allow one event per trigger.
CREATE FUNCTION feature_flags_announce() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('feature_flags', '');
  RETURN NULL;
END $$;

CREATE TRIGGER feature_flags_announce AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON feature_flags
  FOR EACH STATEMENT EXECUTE FUNCTION feature_flags_announce();
