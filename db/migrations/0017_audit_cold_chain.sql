-- The audit hash chain across retention (document 2, issue 7). Once a month is archived and its
-- partition dropped, `npm run audit:verify` must still walk the tenant's chain from seq 1 to its
-- head: the hot rows it reads from audit_records, the archived stretches it takes from here.
--
-- An archive object holds one tenant's records of one month. Their seqs need not be one unbroken
-- range: a record replayed late into an older month has a later seq than records of newer months,
-- so a month's seqs can be several runs with hot (or other months') seqs between them. For each
-- run of consecutive seqs the catalogue keeps where it starts and ends and the two hashes that
-- link it into the chain: the prevHash of its first record and the hash of its last. With these
-- the verifier steps over an archived run without reading the object (the catalogue row was
-- written only after the object was read back and checked), and with --archives it reads the
-- object and checks that its records link up and produce exactly these runs.
--   chain_runs: [{"firstSeq": 1, "lastSeq": 100, "prevHash": "00…", "lastHash": "ab…"}, …] in seq order
-- NULL for objects archived before this migration; the verifier then reads the object itself.
ALTER TABLE audit_cold_objects ADD COLUMN chain_runs jsonb
  CHECK (chain_runs IS NULL OR jsonb_typeof(chain_runs) = 'array');

-- The verifier runs as platform_app in the tenant's scope (it only reads), and platform_app never
-- sees the catalogue (0009). This answers the one question it needs, for the current tenant only:
-- which seqs of its chain are archived (live objects) or were deleted after AUDIT_COLD_YEARS
-- (deleted objects keep their row and runs, so the chain after them still links up).
CREATE FUNCTION audit_archived_chain(p_tenant_id uuid)
RETURNS TABLE (object_key text, state text, records bigint, bytes bigint, sha256 text, chain_runs jsonb)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT o.object_key, o.state, o.records, o.bytes, o.sha256, o.chain_runs
  FROM audit_cold_objects o
  WHERE o.tenant_id = p_tenant_id AND p_tenant_id = current_tenant_id() AND o.state IN ('live', 'deleted')
  ORDER BY o.first_seq
$$;

REVOKE ALL ON FUNCTION audit_archived_chain(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION audit_archived_chain(uuid) TO platform_app;
