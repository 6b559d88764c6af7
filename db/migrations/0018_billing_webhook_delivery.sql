-- Billing webhooks answered before their delivery (issue 5, Performance: under 100 ms at p99, the work
-- continuing in the workflow).
--
-- Until now a receipt was inserted and the subscription workflow signalled inside one transaction, so
-- every answer waited for Temporal. Now the receipt transaction records the verified event together with
-- what the workflow needs (`event`) and commits; the gateway answers 200 and signals the workflow right
-- after, off the response path, then marks the receipt delivered. A receipt left undelivered (the gateway
-- stopped between commit and signal, Temporal was away) is delivered again by the redelivery Schedule
-- (workflow webhookRedelivery, on the billing worker). Delivery is at least once: the subscription
-- workflow ignores a provider event id it has applied before.

-- The provider event as the subscription workflow's providerEvent signal carries it
-- ({provider, eventId, kind, planId?, periodEnd?}), so the sweeper can deliver it without the body.
ALTER TABLE billing_webhook_events ADD COLUMN event jsonb;
-- The trace of the request that received it: the sweeper's log lines name it too.
ALTER TABLE billing_webhook_events ADD COLUMN trace_id text;
-- Null while the workflow has not acknowledged the signal.
ALTER TABLE billing_webhook_events ADD COLUMN delivered_at timestamptz;

-- Receipts from before this migration were signalled inside their transaction: all delivered.
UPDATE billing_webhook_events SET delivered_at = received_at WHERE delivered_at IS NULL;

-- A receipt still to deliver must carry what to deliver.
ALTER TABLE billing_webhook_events ADD CONSTRAINT billing_webhook_events_undelivered_has_event
  CHECK (delivered_at IS NOT NULL OR event IS NOT NULL);

-- The sweeper's and the backlog metric's only question: what is still undelivered, oldest first.
CREATE INDEX billing_webhook_events_undelivered ON billing_webhook_events (received_at) WHERE delivered_at IS NULL;

-- Receipts stay facts (UPDATE and DELETE were revoked in 0016); the gateway may only set the delivery
-- marker of its own tenant's rows (row-level security still applies to UPDATE).
GRANT UPDATE (delivered_at) ON billing_webhook_events TO platform_app;

-- The gateway's /metrics reports the delivery backlog across tenants (billing_webhook_undelivered_events,
-- billing_webhook_oldest_undelivered_seconds). It runs as platform_app, which sees one tenant at a time,
-- so the two aggregate numbers come from this function, which answers nothing about any one tenant.
CREATE FUNCTION billing_webhook_delivery_backlog()
RETURNS TABLE (undelivered bigint, oldest_received_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT count(*), min(received_at) FROM billing_webhook_events WHERE delivered_at IS NULL
$$;

REVOKE ALL ON FUNCTION billing_webhook_delivery_backlog() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION billing_webhook_delivery_backlog() TO platform_app;
