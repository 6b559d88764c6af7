-- Image processing (document 2, Files: POST /files/:id/process; issue 17): the file's latest
-- processing job, which GET /files/:id?meta=1 shows (docs/decisions/files.md, Processing).
--
-- {jobId, status: processing | completed | failed, startedAt, completedAt}: only the latest job is
-- kept here; every job's own state and result live in its workflow (`files.process:<id>`), which
-- GET /v1/jobs/{jobId} reads. A processed file's content is a new object (object_key changes), so no
-- column of the content's history is needed.
ALTER TABLE files ADD COLUMN processing jsonb
  CHECK (processing IS NULL OR (jsonb_typeof(processing) = 'object'
    AND processing ->> 'status' IN ('processing', 'completed', 'failed')));
