-- Orphaned files (document 2, Files: "the platform records which records reference which files;
-- a daily Temporal Schedule finds files with no reference older than 24 hours and deletes them
-- permanently 30 days later", issue 17). docs/decisions/files.md, Orphans.
--
-- file_references holds one row per referrer of a file: a data-layer field of type `file` of one
-- record (`data:<module>.<model>.<field>`, the record's id), or a user's avatar (`user.avatar`, the
-- user's id). The data layer writes it in the transaction of the record's write
-- (services/data/file-references.ts); the sweep (workflows/files/orphan-sweep.workflow.ts) reads it.

-- The composite key the references' foreign key needs: a reference names a file of its own tenant,
-- which PostgreSQL checks whatever row-level security lets the writer see.
CREATE UNIQUE INDEX files_tenant_id_key ON files (tenant_id, id);

CREATE TABLE file_references (
  tenant_id    uuid NOT NULL REFERENCES tenants (id),
  referrer     text NOT NULL CHECK (
    referrer = 'user.avatar'
    OR referrer ~ '^data:[a-z][a-z0-9_]{0,49}\.[a-z][a-z0-9_]{0,62}\.[a-z][a-zA-Z0-9]{0,62}$'
  ),
  -- The record's id, or the user's.
  referrer_id  uuid NOT NULL,
  file_id      uuid NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  -- A referrer (one field of one record, one user's avatar) holds one file at a time.
  PRIMARY KEY (tenant_id, referrer, referrer_id),
  FOREIGN KEY (tenant_id, file_id) REFERENCES files (tenant_id, id)
);
-- "Is this file referenced?": the sweep's question for every candidate.
CREATE INDEX file_references_file ON file_references (tenant_id, file_id);

ALTER TABLE file_references ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON file_references
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
-- Migration 0001's default privileges grant the table to the application role, which the gateway's
-- data layer and the sweep's per-tenant activities (workers/main.ts appPool) both use. A row is
-- deleted when its referrer lets go of the file (the field cleared or changed, the record deleted).
REVOKE TRUNCATE ON file_references FROM platform_app;

-- When the sweep found the file unreferenced (its workflow's time); NULL while it is referenced or
-- has not been looked at. A reference written since clears it; the sweep purges a file still
-- unreferenced FILES_ORPHAN_RETENTION_DAYS after it.
ALTER TABLE files ADD COLUMN orphaned_at timestamptz;
-- The sweep's pages: a tenant's available files by id (marking), and its marked ones (review, purge).
CREATE INDEX files_tenant_available ON files (tenant_id, id) WHERE status = 'available';
CREATE INDEX files_tenant_orphaned ON files (tenant_id, id) WHERE status = 'available' AND orphaned_at IS NOT NULL;
