-- Audit (document 2, issue 7): the append-only, hash-chained store of audit records, the head of
-- each tenant's chain, and the fallback buffer of the direct intake path.
--
-- Who does what (see docs/decisions.md, Audit):
--   platform_owner  the audit consumer (workers/audit-consumer.ts), a system process, inserts records,
--                   advances chain heads, creates monthly partitions and replays the fallback buffer.
--   platform_app    reads records and chain heads of its own tenant only (row-level security); it may
--                   only INSERT into the fallback buffer, which it can neither read nor change.

-- Records, partitioned by month on occurred_at (the record's timestamp, which is also hashed), so
-- retention can later move or drop whole months. The primary key must contain the partition key;
-- an event id comes with its timestamp, so (id, occurred_at) identifies a redelivered event.
CREATE TABLE audit_records (
  id               uuid NOT NULL,
  tenant_id        uuid NOT NULL,
  -- Position in the tenant's chain: 1, 2, 3 ... without gaps (the verifier checks it).
  seq              bigint NOT NULL CHECK (seq > 0),
  action           text NOT NULL,
  entity_type      text NOT NULL,
  entity_id        text NOT NULL,
  actor_id         text,
  actor_ip         text,
  actor_user_agent text,
  impersonator_id  text,
  before           jsonb,
  after            jsonb,
  meta             jsonb,
  trace_id         text,
  occurred_at      timestamptz NOT NULL,
  -- When the consumer stored it; informational, not part of the hash.
  stored_at        timestamptz NOT NULL DEFAULT now(),
  -- SHA-256 of the canonical serialization of the record and prev_hash (common/audit/chain.ts).
  prev_hash        bytea NOT NULL CHECK (length(prev_hash) = 32),
  hash             bytea NOT NULL CHECK (length(hash) = 32),
  PRIMARY KEY (id, occurred_at)
) PARTITION BY RANGE (occurred_at);

-- Walks of one chain (the verifier, exports in seq order). Not unique: a unique index on a
-- partitioned table must contain occurred_at; the chain heads keep seq unique instead.
CREATE INDEX audit_records_tenant_seq ON audit_records (tenant_id, seq);

-- A safety net: an insert never fails for want of a partition. The consumer creates each month's
-- partition before it inserts into it, so this stays empty; rows found here must be moved out by
-- an operator before that month's partition can be created.
CREATE TABLE audit_records_default PARTITION OF audit_records DEFAULT;

-- The head of each tenant's chain. The consumer locks the rows of a batch's tenants FOR UPDATE (in
-- tenant id order, so two consumers never deadlock), which serializes writers per tenant: two
-- records can never take the same seq or the same predecessor.
CREATE TABLE audit_chain_heads (
  tenant_id  uuid PRIMARY KEY,
  last_seq   bigint NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
  -- The genesis value (32 zero bytes) is the prev_hash of a tenant's first record.
  last_hash  bytea NOT NULL DEFAULT decode(repeat('00', 32), 'hex') CHECK (length(last_hash) = 32),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Creates the partition of the month containing p_month (UTC months) unless it exists, and returns
-- its name. Called by the consumer before its first insert into a month (see docs/decisions.md).
-- New tables get the application role's default privileges of migration 0001; a partition reached
-- directly would bypass the parent's row-level security and revokes, so they are taken away here.
CREATE FUNCTION audit_ensure_partition(p_month date) RETURNS text
  LANGUAGE plpgsql AS $$
DECLARE
  first_day date := date_trunc('month', p_month)::date;
  partition_name text := format('audit_records_%s', to_char(first_day, 'YYYY_MM'));
BEGIN
  IF to_regclass(partition_name) IS NOT NULL THEN
    RETURN partition_name;
  END IF;
  -- Two consumers meeting a new month at once: the second waits, then finds the table. A lock on
  -- the table itself (self-conflicting, and taken by CREATE ... PARTITION OF anyway) rather than an
  -- advisory lock, because taking a table lock also refreshes this session's view of the catalog.
  LOCK TABLE audit_records IN SHARE ROW EXCLUSIVE MODE;
  IF to_regclass(partition_name) IS NULL THEN
    EXECUTE format(
      'CREATE TABLE %I PARTITION OF audit_records FOR VALUES FROM (%L) TO (%L)',
      partition_name,
      first_day::timestamp AT TIME ZONE 'UTC',
      (first_day + interval '1 month')::timestamp AT TIME ZONE 'UTC');
    EXECUTE format('REVOKE ALL ON %I FROM PUBLIC, platform_app', partition_name);
    PERFORM audit_refuse_truncate_of(partition_name);
  END IF;
  RETURN partition_name;
END $$;

-- Append-only for everyone, the owner included: UPDATE, DELETE and TRUNCATE are refused. The
-- triggers are cloned onto every partition. A superuser or the owner can still disable a trigger;
-- that is why every record is also chained by hash, so such a change is detected by audit:verify.
-- Retention works on whole partitions (detach, drop), which no row trigger sees.
CREATE FUNCTION audit_refuse_change() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit records are append-only: % on % refused', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'raise_exception', HINT = 'append a new record instead';
END $$;
CREATE TRIGGER audit_records_append_only BEFORE UPDATE OR DELETE ON audit_records
  FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_records_no_truncate BEFORE TRUNCATE ON audit_records
  FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();

-- Statement triggers are not cloned onto partitions, and TRUNCATE of a partition by name fires
-- only its own: each partition gets the TRUNCATE refusal as well.
CREATE FUNCTION audit_refuse_truncate_of(partition_name text) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format(
    'CREATE TRIGGER audit_records_no_truncate BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change()',
    partition_name);
END $$;
SELECT audit_refuse_truncate_of('audit_records_default');

-- The durable buffer of the direct intake path: records the gateway could not hand to Kafka. The
-- audit consumer replays it every 30 s and deletes a row once Kafka acknowledged it; rows are never
-- dropped by age (document 2 asks the buffer to hold 7 days; older rows are reported as an alarm).
CREATE TABLE audit_fallback_buffer (
  -- The event id, which is the audit record id: a replay that reaches Kafka twice is de-duplicated.
  id            uuid PRIMARY KEY,
  tenant_id     uuid NOT NULL,
  partition_key text NOT NULL,
  -- The whole document 3 envelope, so the replayed message is the one that was meant to be sent.
  envelope      jsonb NOT NULL,
  buffered_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_fallback_buffer_buffered_at ON audit_fallback_buffer (buffered_at, id);

-- Row-level security: platform_app reads its own tenant's records and chain head, nothing more.
ALTER TABLE audit_records ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON audit_records FOR SELECT USING (tenant_id = current_tenant_id());
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON audit_records FROM platform_app;
REVOKE ALL ON audit_records_default FROM PUBLIC, platform_app;

ALTER TABLE audit_chain_heads ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON audit_chain_heads FOR SELECT USING (tenant_id = current_tenant_id());
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON audit_chain_heads FROM platform_app;

-- A drop box for platform_app: it writes rows of any tenant (an intake batch is checked by the
-- gateway, not here) but can never read, change or delete one, so no tenant sees another's.
REVOKE SELECT, UPDATE, DELETE, TRUNCATE ON audit_fallback_buffer FROM platform_app;

REVOKE ALL ON FUNCTION audit_ensure_partition(date) FROM PUBLIC;
REVOKE ALL ON FUNCTION audit_refuse_truncate_of(text) FROM PUBLIC;
