-- Event bus, consumers (document 3, issue 18): consumer groups' de-duplication receipts, the
-- dead-letter store, and the permissions to subscribe and to operate dead letters.
--
-- Document 3 names `events.subscribe` (Authentication 3) and no key for the dead-letter
-- operations (Authentication 7): they get `events.dlq.read` and `events.dlq.retry`. All three are
-- system keys the admin role holds, like events.publish; a member holds none.
INSERT INTO permissions (key, module, description) VALUES
  ('events.subscribe', 'system', 'Subscribe consumer groups to the event bus, replay them and read their positions'),
  ('events.dlq.read', 'system', 'Inspect the dead-lettered events of the tenant'),
  ('events.dlq.retry', 'system', 'Retry and replay the dead-lettered events of the tenant');

-- Tenants registered before this migration: their built-in admin role gets the keys new tenants'
-- admin roles are created with (services/access/permissions.ts). The owner role holds '*'.
UPDATE roles SET permissions = permissions || ARRAY['events.subscribe', 'events.dlq.read', 'events.dlq.retry']
WHERE built_in AND name = 'admin' AND tenant_id IS NOT NULL AND NOT ('events.subscribe' = ANY (permissions));

-- An event a consumer group has handled (document 3, Events 2: delivery is at least once, so a
-- group drops an event id it has seen). Written in the same transaction as the handler's effect
-- where the handler writes to PostgreSQL, so the receipt and the effect commit together.
-- Financial events (money.*) are kept forever (expires_at NULL); every other receipt for 24 hours,
-- then the maintenance sweep deletes it.
CREATE TABLE event_receipts (
  tenant_id       uuid NOT NULL,
  -- The Kafka group id: `<consuming-service>.<handler-name>` for the platform's own groups, and
  -- `tenant.<tenantId>.<group>` for a tenant's gRPC subscription (services/events/consumers/group-names.ts),
  -- so a tenant's subscription and a platform group of the same name never share receipts.
  consumer_group  text NOT NULL CHECK (length(consumer_group) BETWEEN 3 AND 200),
  event_id        uuid NOT NULL,
  received_at     timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz,
  PRIMARY KEY (tenant_id, consumer_group, event_id)
);
CREATE INDEX event_receipts_expiry ON event_receipts (expires_at) WHERE expires_at IS NOT NULL;

ALTER TABLE event_receipts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON event_receipts
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

-- An event whose handler failed BROKER_MAX_ATTEMPTS times in one consumer group (document 3,
-- DLQRecord). The envelope is kept whole, so a retry re-publishes exactly the event that failed
-- (same id, so groups that handled it already drop it) even after the topic no longer retains it.
--   pending   waiting for an operator (or DLQReplayAll);
--   retrying  re-published for its group, whose next outcome moves it on;
--   resolved  the group handled it after a retry;
--   expired   older than EVENTS_DLQ_RETENTION_HOURS; no longer retried.
-- A retry that fails again returns the row to pending with times_dead_lettered + 1; at
-- EVENTS_DLQ_QUARANTINE_AFTER it is quarantined: replay-all skips it, an explicit retry still works.
CREATE TABLE event_dead_letters (
  -- UUID v7: the id of GET /integrations/dlq and POST /integrations/dlq/:id/retry.
  id                   uuid PRIMARY KEY,
  tenant_id            uuid NOT NULL,
  -- The Kafka group id, as in event_receipts.
  consumer_group       text NOT NULL CHECK (length(consumer_group) BETWEEN 3 AND 200),
  topic                text NOT NULL,
  -- Where the group read it (first dead-lettering), for the operator's eyes.
  partition            integer NOT NULL CHECK (partition >= 0),
  "offset"             bigint NOT NULL CHECK ("offset" >= 0),
  -- The Kafka key (partition key) the event was published with; a retry uses it again.
  event_key            text NOT NULL,
  event_id             uuid NOT NULL,
  event_type           text NOT NULL,
  -- The broker message's value (common/event-envelope.ts) and its correlation header.
  envelope             jsonb NOT NULL CHECK (jsonb_typeof(envelope) = 'object'),
  correlation_id       text,
  attempt_count        integer NOT NULL CHECK (attempt_count >= 1),
  last_error           text NOT NULL,
  status               text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'retrying', 'resolved', 'expired')),
  times_dead_lettered  integer NOT NULL DEFAULT 1 CHECK (times_dead_lettered >= 1),
  quarantined          boolean NOT NULL DEFAULT false,
  dead_lettered_at     timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  resolved_at          timestamptz,
  expires_at           timestamptz NOT NULL,
  CONSTRAINT event_dead_letters_once UNIQUE (tenant_id, consumer_group, event_id)
);
-- The operator's list: a tenant's dead letters, newest first, by status.
CREATE INDEX event_dead_letters_tenant_status ON event_dead_letters (tenant_id, status, dead_lettered_at DESC, id DESC);
-- DLQRetry names an event id.
CREATE INDEX event_dead_letters_event ON event_dead_letters (tenant_id, event_id);
-- The expiry sweep.
CREATE INDEX event_dead_letters_expiry ON event_dead_letters (expires_at) WHERE status IN ('pending', 'retrying');

ALTER TABLE event_dead_letters ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON event_dead_letters
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

-- A dead letter is never deleted by the application: its history is the operator's record.
REVOKE DELETE, TRUNCATE ON event_dead_letters FROM platform_app;
