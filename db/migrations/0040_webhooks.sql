-- Outbound webhooks (issue 35): a tenant's HTTPS endpoints, each receiving the tenant's events of
-- the types it names, signed as Standard Webhooks says; and every delivery attempt, for the
-- endpoint's attempts list. docs/decisions/events.md, Outbound webhooks, has the choices.

-- Managing endpoints is a system key the admin role holds, like the event bus's (migration 0033);
-- the owner role holds '*'.
INSERT INTO permissions (key, module, description) VALUES
  ('webhooks.manage', 'system', 'Create, change, test and delete the tenant''s outbound webhook endpoints');

-- Tenants registered before this migration: their built-in admin role gets the key new tenants'
-- admin roles are created with (services/access/permissions.ts).
UPDATE roles SET permissions = permissions || ARRAY['webhooks.manage']
WHERE built_in AND name = 'admin' AND tenant_id IS NOT NULL AND NOT ('webhooks.manage' = ANY (permissions));

CREATE TABLE webhook_endpoints (
  -- UUID v7: the id of /v1/webhooks/endpoints/{id}, and of the consumer group `webhooks.<id>` its
  -- dead letters are kept under.
  id                          uuid PRIMARY KEY,
  tenant_id                   uuid NOT NULL,
  url                         text NOT NULL CHECK (length(url) BETWEEN 8 AND 2048),
  -- Exact types or `<prefix>.*`; the dispatcher matches them (services/events/webhooks/matching.ts).
  event_types                 text[] NOT NULL CHECK (cardinality(event_types) BETWEEN 1 AND 50),
  description                 text NOT NULL DEFAULT '' CHECK (length(description) <= 500),
  enabled                     boolean NOT NULL DEFAULT true,
  -- `whsec_<base64 key>`; the previous one keeps signing beside it until it expires (rotate-secret).
  secret                      text NOT NULL,
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  -- The first failed attempt since the last success; 5 days of failures disable the endpoint.
  failing_since               timestamptz,
  -- Why an endpoint is off when the platform turned it off ('failing'); null when a person did, or it is on.
  disabled_reason             text CHECK (disabled_reason IN ('failing')),
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhook_endpoints_previous_secret CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))
);
-- The tenant's list (by id, UUID v7: oldest first), and the dispatcher's question: the tenant's enabled endpoints.
CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id, id);
CREATE INDEX webhook_endpoints_enabled ON webhook_endpoints (tenant_id) WHERE enabled;

ALTER TABLE webhook_endpoints ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_endpoints
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

-- One POST of one event to one endpoint. The delivery workflow writes it pending just before the
-- request and settles it with the answer; a retry of the same attempt (the activity retried) finds
-- its row by (workflow_run_id, attempt).
CREATE TABLE webhook_attempts (
  -- UUID v7, written by the activity: the attempts list is newest first by it.
  id               uuid PRIMARY KEY,
  tenant_id        uuid NOT NULL,
  endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id         uuid NOT NULL,
  event_type       text NOT NULL,
  workflow_run_id  text NOT NULL,
  attempt          integer NOT NULL CHECK (attempt >= 1),
  status           text NOT NULL CHECK (status IN ('succeeded', 'failed', 'pending')),
  response_status  integer CHECK (response_status BETWEEN 100 AND 599),
  duration_ms      integer CHECK (duration_ms >= 0),
  -- Why a failed attempt failed, in a few words (a timeout, a refused address); never the response body.
  error            text CHECK (length(error) <= 500),
  attempted_at     timestamptz NOT NULL,
  next_attempt_at  timestamptz,
  CONSTRAINT webhook_attempts_once UNIQUE (workflow_run_id, attempt)
);
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (tenant_id, endpoint_id, id DESC);

ALTER TABLE webhook_attempts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_attempts
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
