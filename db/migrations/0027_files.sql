-- Files (document 2, issue 17): one row per uploaded file, from its staging to its end.
--
-- An upload is streamed to the private staging key `{tenantId}/staging/{fileId}` and recorded here
-- as pending_scan; the scan workflow (`files.scan:<fileId>`) moves it to `{tenantId}/<bucket>/
-- {fileId}/original` and the row to available, or removes it and the row becomes rejected
-- (docs/decisions/files.md). The object keys are derived by services/files/object-keys.ts; the row
-- keeps them so a later change of layout never strands an object.

-- The files keys are system keys (document 2 names none, like money's): the admin role holds them
-- like every non-platform system key, a member holds none.
INSERT INTO permissions (key, module, description) VALUES
  ('files.read', 'system', 'Read files, their download URLs and listings'),
  ('files.write', 'system', 'Upload and process files'),
  ('files.delete', 'system', 'Delete, restore and permanently delete files');

-- Tenants registered before this migration: their built-in admin role gets the keys new tenants'
-- admin roles are created with (services/access/permissions.ts). The owner role holds '*'.
UPDATE roles SET permissions = permissions || ARRAY['files.read', 'files.write', 'files.delete']
WHERE built_in AND name = 'admin' AND tenant_id IS NOT NULL AND NOT ('files.read' = ANY (permissions));

CREATE TABLE files (
  -- UUID v7 (common/ids newId): time-ordered, the listing's tie-breaker.
  id               uuid PRIMARY KEY,
  tenant_id        uuid NOT NULL REFERENCES tenants (id),
  bucket           text NOT NULL CHECK (bucket IN ('avatars', 'assets', 'documents', 'exports', 'modules')),
  original_name    text NOT NULL CHECK (length(original_name) BETWEEN 1 AND 255),
  mime_type        text NOT NULL,
  size_bytes       bigint NOT NULL CHECK (size_bytes >= 0),
  -- Hex SHA-256 of the content, computed while the upload streams.
  sha256           text CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  -- purged: permanently deleted; the row stays for the audit trail and answers 404 like an unknown id.
  status           text NOT NULL CHECK (status IN ('pending_scan', 'available', 'rejected', 'deleted', 'purged')),
  -- Where the upload waits for its scan; never reachable through a URL the platform hands out.
  staging_key      text NOT NULL,
  -- The stored object, set when the scan passes.
  object_key       text,
  -- {preset: objectKey} of the thumbnails generated so far.
  thumbnails       jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(thumbnails) = 'object'),
  -- The client's `meta` field (at most 4 KB, checked by the gateway).
  meta             jsonb,
  -- The uploading user; NULL when no user did (a platform process).
  uploaded_by      uuid,
  -- 'infected: <signature>' or 'staging-expired'.
  rejected_reason  text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  scanned_at       timestamptz,
  deleted_at       timestamptz,
  CONSTRAINT files_available_has_object CHECK (status <> 'available' OR object_key IS NOT NULL)
);
-- Listings: a tenant's files in creation order, keyset on (created_at, id).
CREATE INDEX files_tenant_created ON files (tenant_id, created_at, id);
-- Status filters and the staging cap (count of a tenant's pending_scan files).
CREATE INDEX files_tenant_status ON files (tenant_id, status);

ALTER TABLE files ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON files
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

-- A file row is never deleted (a purged file keeps its row); migration 0001's default privileges
-- grant the rest to the application role, which the gateway and the tenant-scoped activities use.
REVOKE DELETE, TRUNCATE ON files FROM platform_app;
