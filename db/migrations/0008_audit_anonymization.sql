-- Audit anonymization and query indexes (document 2, issue 7). The store stays append-only:
-- anonymizing a user changes no record. It notes the user here, and every reader goes through the
-- view audit_records_readable, which masks that user's personal fields at read time. The original
-- values stay in audit_records (the hash chain still verifies) but no endpoint reads them there.
-- See /work/notes/decisions-audit-api.md (Audit anonymization) for the exact masking rule.

-- One row per anonymized user and tenant. masked_until is the time up to which that user's records
-- are masked: records with occurred_at <= masked_until (records still in flight in Kafka carry their
-- earlier timestamp, so they are masked when they land). A later anonymization of the same user
-- moves it forward; it never moves back, and the row is never deleted (an anonymization cannot be
-- undone). The history of anonymizations is the audit log itself (action audit.record.anonymized).
-- user_id is text like the actor columns of audit_records, which it is compared with.
CREATE TABLE audit_anonymized_users (
  tenant_id              uuid NOT NULL,
  user_id                text NOT NULL,
  masked_until           timestamptz NOT NULL,
  first_anonymized_at    timestamptz NOT NULL DEFAULT now(),
  -- The ANONYMIZE record of the latest anonymization (its audit record id).
  last_anonymization_id  uuid NOT NULL,
  PRIMARY KEY (tenant_id, user_id)
);

ALTER TABLE audit_anonymized_users ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON audit_anonymized_users
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
REVOKE DELETE, TRUNCATE ON audit_anonymized_users FROM platform_app;

-- masked_until only moves forward, whoever writes.
CREATE FUNCTION audit_anonymized_users_forward_only() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.masked_until < OLD.masked_until OR NEW.tenant_id <> OLD.tenant_id OR NEW.user_id <> OLD.user_id THEN
    RAISE EXCEPTION 'an anonymization cannot be narrowed or moved' USING ERRCODE = 'raise_exception';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER audit_anonymized_users_forward_only BEFORE UPDATE ON audit_anonymized_users
  FOR EACH ROW EXECUTE FUNCTION audit_anonymized_users_forward_only();

-- The 60 s anonymization lock of document 2 (Limits / Audit). A row is the lock of one user; it is
-- committed before the anonymization starts, so other requests for the same user see it (409
-- anonymize-conflict) and readers of the tenant wait while any lock of their tenant is live
-- (api/audit/anonymization-lock.ts). A crashed holder's lock simply expires; the next request takes
-- it over. In PostgreSQL rather than Redis: tenant-scoped by row-level security, and readable by
-- the same connections the readers already hold.
CREATE TABLE audit_anonymization_locks (
  tenant_id   uuid NOT NULL,
  user_id     text NOT NULL,
  -- The holder's token: only the holder releases its lock.
  token       uuid NOT NULL,
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, user_id)
);
ALTER TABLE audit_anonymization_locks ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON audit_anonymization_locks
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE INDEX audit_anonymization_locks_expiry ON audit_anonymization_locks (tenant_id, expires_at);

-- What every reader sees: audit_records with the personal fields of anonymized users masked.
-- Same columns as audit_records. security_invoker: the caller's row-level security applies to
-- audit_records and audit_anonymized_users underneath, so a tenant sees only its own rows.
--   * actor masked (actor_id is an anonymized user, record not later than masked_until):
--     actor_id = 'anonymized', actor_ip and actor_user_agent NULL.
--   * impersonator masked (impersonator_id is an anonymized user): impersonator_id = 'anonymized',
--     actor_ip and actor_user_agent NULL (they were the impersonator's connection).
--   * subject masked (entity_type 'user' and entity_id an anonymized user): before, after and meta
--     become {"anonymized": true} where they were present. The ANONYMIZE records themselves
--     (audit.record.anonymized) are exempt: their meta says what was done and holds no personal data.
--   * money.* records are never masked (document 2: financial records are never anonymized);
--     the anonymize endpoint refuses users who have any (403 anonymize-financial-record).
-- The joins are on primary keys and preserve the order of audit_records, so an index scan with
-- LIMIT stays an index scan with LIMIT; filters on unmasked columns reach the indexes below.
CREATE VIEW audit_records_readable WITH (security_invoker = true) AS
SELECT r.id, r.tenant_id, r.seq, r.action, r.entity_type, r.entity_id,
       CASE WHEN m.actor THEN 'anonymized' ELSE r.actor_id END AS actor_id,
       CASE WHEN m.actor OR m.impersonator THEN NULL ELSE r.actor_ip END AS actor_ip,
       CASE WHEN m.actor OR m.impersonator THEN NULL ELSE r.actor_user_agent END AS actor_user_agent,
       CASE WHEN m.impersonator THEN 'anonymized' ELSE r.impersonator_id END AS impersonator_id,
       CASE WHEN m.subject AND r.before IS NOT NULL THEN '{"anonymized": true}'::jsonb ELSE r.before END AS before,
       CASE WHEN m.subject AND r.after IS NOT NULL THEN '{"anonymized": true}'::jsonb ELSE r.after END AS after,
       CASE WHEN m.subject AND r.meta IS NOT NULL THEN '{"anonymized": true}'::jsonb ELSE r.meta END AS meta,
       r.trace_id, r.occurred_at, r.stored_at, r.prev_hash, r.hash
FROM audit_records r
LEFT JOIN audit_anonymized_users act
  ON act.tenant_id = r.tenant_id AND act.user_id = r.actor_id
LEFT JOIN audit_anonymized_users imp
  ON imp.tenant_id = r.tenant_id AND imp.user_id = r.impersonator_id
LEFT JOIN audit_anonymized_users sub
  ON sub.tenant_id = r.tenant_id AND r.entity_type = 'user' AND sub.user_id = r.entity_id
CROSS JOIN LATERAL (
  SELECT r.action NOT LIKE 'money.%' AND coalesce(r.occurred_at <= act.masked_until, false) AS actor,
         r.action NOT LIKE 'money.%' AND coalesce(r.occurred_at <= imp.masked_until, false) AS impersonator,
         r.action NOT LIKE 'money.%' AND r.action <> 'audit.record.anonymized'
           AND coalesce(r.occurred_at <= sub.masked_until, false) AS subject
) m;

GRANT SELECT ON audit_records_readable TO platform_app;

-- Query indexes (cloned onto every monthly partition, present and future). Lists are newest first
-- with (occurred_at, id) as the keyset:
--   * by entity (entity history, ?entityType&entityId): the 20 ms p99 target at 10 million records;
--   * by tenant and time (unfiltered lists, since/until);
--   * by action in C collation, so `action*` prefixes are index range scans whatever the database
--     collation is.
CREATE INDEX audit_records_entity ON audit_records (tenant_id, entity_type, entity_id, occurred_at DESC, id DESC);
CREATE INDEX audit_records_tenant_time ON audit_records (tenant_id, occurred_at DESC, id DESC);
CREATE INDEX audit_records_action ON audit_records (tenant_id, action COLLATE "C", occurred_at DESC);
-- The anonymize endpoint counts a user's records as actor (and checks them for money.*).
CREATE INDEX audit_records_actor ON audit_records (tenant_id, actor_id, occurred_at DESC) WHERE actor_id IS NOT NULL;
CREATE INDEX audit_records_impersonator ON audit_records (tenant_id, impersonator_id) WHERE impersonator_id IS NOT NULL;
