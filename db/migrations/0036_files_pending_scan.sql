-- The staging sweep (docs/decisions/files.md, Staging sweep; workflows/files/staging-sweep.workflow.ts):
-- every few minutes it looks across tenants for pending_scan files recorded more than a grace ago, oldest
-- first, and starts the scan of any whose upload never started it. Its only question, answered from the
-- files still waiting for a verdict (a few per tenant at most: FILES_STAGING_MAX_PER_TENANT) rather than
-- from every file ever stored.
CREATE INDEX files_pending_scan ON files (created_at, id) WHERE status = 'pending_scan';
