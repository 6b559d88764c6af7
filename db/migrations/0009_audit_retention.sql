-- Audit retention and exports (document 2, issue 7): which months of which tenant now live only in
-- cold storage, and the cold-export jobs the gateway answers with 202 {jobId}.
--
-- Who does what (see docs/decisions.md, Audit):
--   platform_owner  the retention and cold-export activities (workers), system processes: they write
--                   both tables, upload and delete the objects, and drop archived partitions.
--   platform_app    queues a cold-export job of its own tenant and reads its status (row-level
--                   security); it never sees the archive catalogue.

-- One row per tenant per archived partition: the gzip-compressed NDJSON object (every stored column,
-- seq, prev_hash and hash included, so the chain can still be verified) and its manifest. The key
-- holds the seq range, so a month whose partition is created again later (a record replayed late)
-- gets an object of its own instead of overwriting the first one.
--   uploaded  written and verified, but the partition still holds the rows (a run may stop here and
--             be resumed: the next run finds the object and does not upload it again)
--   live      the partition was dropped in the transaction that set this state: the object is now
--             the only copy, and the cold export reads it
--   deleted   removed after AUDIT_COLD_YEARS; the row stays as the evidence of what was removed when
CREATE TABLE audit_cold_objects (
  tenant_id      uuid NOT NULL,
  object_key     text NOT NULL,
  manifest_key   text NOT NULL,
  -- The first day of the partition's month (UTC).
  month          date NOT NULL,
  partition_name text NOT NULL,
  first_seq      bigint NOT NULL,
  last_seq       bigint NOT NULL,
  records        bigint NOT NULL CHECK (records > 0),
  -- Of the compressed object as stored; checked again by reading the object back before the drop.
  bytes          bigint NOT NULL,
  sha256         text NOT NULL,
  state          text NOT NULL DEFAULT 'uploaded' CHECK (state IN ('uploaded', 'live', 'deleted')),
  uploaded_at    timestamptz NOT NULL DEFAULT now(),
  live_at        timestamptz,
  deleted_at     timestamptz,
  PRIMARY KEY (tenant_id, object_key)
);
-- The cold export looks up one tenant's live months in a range.
CREATE INDEX audit_cold_objects_tenant_month ON audit_cold_objects (tenant_id, month) WHERE state = 'live';
-- Retention finds what a partition's archive already holds, and what is due for deletion.
CREATE INDEX audit_cold_objects_partition ON audit_cold_objects (partition_name) WHERE state = 'uploaded';
CREATE INDEX audit_cold_objects_due ON audit_cold_objects (month) WHERE state = 'live';

REVOKE ALL ON audit_cold_objects FROM PUBLIC, platform_app;

-- Cold-export jobs. The id is derived from tenant, range and format (api/audit/export), so asking
-- twice for the same export finds the same job. The gateway inserts the row as queued in the
-- request's transaction (so the status can be read right after the 202); the workflow's activities
-- move it on: running, completed (with the object and its expiry), failed, expired (object deleted).
CREATE TABLE audit_export_jobs (
  tenant_id    uuid NOT NULL,
  id           text NOT NULL,
  format       text NOT NULL CHECK (format IN ('json', 'csv')),
  since        timestamptz NOT NULL,
  until        timestamptz NOT NULL CHECK (until > since),
  status       text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'expired')),
  requested_by text,
  object_key   text,
  records      bigint,
  bytes        bigint,
  error        text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  expires_at   timestamptz,
  PRIMARY KEY (tenant_id, id)
);

ALTER TABLE audit_export_jobs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON audit_export_jobs
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
-- The gateway queues (INSERT) and re-queues a failed or expired job (UPDATE); it never deletes one.
REVOKE DELETE, TRUNCATE ON audit_export_jobs FROM platform_app;
