-- Billing, part 1 (document 1, Billing): the subscription lifecycle and payment-provider webhooks.
--
-- The subscription of a tenant (migration 0002) is a mirror: its state lives in the Temporal workflow
-- `subscription:<tenantId>`, whose activities write every change here (as the owner role) together with
-- its billing.* event and audit record. Readers (GET /billing/subscriptions, the gateway's limit
-- enforcement) read the mirror; `version` is the optimistic lock that PATCH compares.

-- The workflow is the only writer of a subscription after its creation. The gateway (platform_app)
-- inserts the trialing row at registration and reads; it never changes one, so a handler bug cannot
-- move a subscription past the workflow's state machine.
REVOKE UPDATE, DELETE ON subscriptions FROM platform_app;

-- When the subscription entered its current status; the dunning clock (past_due, suspended) counts
-- from the moment it went past_due, kept in the workflow, and this column lets operators and the
-- Temporal-less readers see how long a tenant has been in its state.
ALTER TABLE subscriptions ADD COLUMN status_changed_at timestamptz NOT NULL DEFAULT now();

-- Provider webhook events already received (document 1, Webhook rules 3: duplicate provider event ids
-- are ignored). Keyed by provider and the provider's own event id; inserted in the transaction that
-- hands the event to the subscription workflow, so an event is either recorded and delivered, or
-- neither (and the provider's retry delivers it). Tenant-owned: the tenant comes from the signed
-- payload (metadata.tenantId / custom_data.tenantId), and the row is written in that tenant's
-- transaction. The primary key spans tenants, so the same event id cannot be replayed into another
-- tenant either.
CREATE TABLE billing_webhook_events (
  provider     text NOT NULL CHECK (provider IN ('stripe', 'paddle')),
  event_id     text NOT NULL CHECK (length(event_id) BETWEEN 1 AND 255),
  event_type   text NOT NULL,
  tenant_id    uuid NOT NULL REFERENCES tenants (id),
  received_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, event_id)
);
CREATE INDEX billing_webhook_events_tenant ON billing_webhook_events (tenant_id, received_at);

ALTER TABLE billing_webhook_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON billing_webhook_events
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

-- A received event is a fact; it is never edited or forgotten by the application.
REVOKE UPDATE, DELETE ON billing_webhook_events FROM platform_app;
