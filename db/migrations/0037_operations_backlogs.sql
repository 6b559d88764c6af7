-- The backlogs operators alert on, read fleet-wide by the gateway's /metrics (api/metrics/backlog-metrics.ts,
-- docs/operations.md#what-to-watch): unpublished outbox rows, files waiting for their malware scan, the
-- audit intake's fallback buffer, and pending dead letters by consumer group. The gateway runs as
-- platform_app, which sees one tenant at a time (and may not read the audit buffer at all), so, as
-- billing_webhook_delivery_backlog() in 0018 does, one SECURITY DEFINER function owned by the owner role
-- answers the aggregates and nothing about any one tenant.
--
-- One row per backlog: `backlog` names it, `consumer_group` is set for dead letters only, `waiting` is
-- how many rows wait and `oldest_at` since when the oldest waits (NULL when none does; the dead-letter
-- rows then do not appear at all).
--
-- Dead letters are counted per group: a platform group's name is fixed by the code and the module
-- catalogue, so there are few. A tenant's subscription runs as `tenant.<tenantId>.<group>`
-- (services/events/consumers/group-names.ts): one series per tenant would grow the label space with every
-- tenant and name tenants on /metrics, so all tenants' subscriptions are summed as `tenant-subscriptions`,
-- a name no group can have (a group name holds a dot).

-- Each count stays small: the outbox and the files are read through partial indexes of the waiting rows
-- (outbox_events_pending of 0001, files_pending_scan of 0036), the dead letters through an index with their
-- status (0033), and the buffer is a table that stays empty while Kafka answers.

CREATE FUNCTION operations_backlogs()
RETURNS TABLE (backlog text, consumer_group text, waiting bigint, oldest_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT 'outbox', NULL, count(*), min(occurred_at) FROM outbox_events WHERE published_at IS NULL
  UNION ALL
  SELECT 'files_pending_scan', NULL, count(*), min(created_at) FROM files WHERE status = 'pending_scan'
  UNION ALL
  SELECT 'audit_fallback', NULL, count(*), min(buffered_at) FROM audit_fallback_buffer
  UNION ALL
  SELECT 'dead_letters', d.grp, count(*), min(d.dead_lettered_at)
  FROM (
    SELECT CASE WHEN consumer_group ~ '^tenant\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.'
                THEN 'tenant-subscriptions' ELSE consumer_group END AS grp,
           dead_lettered_at
    FROM event_dead_letters
    WHERE status = 'pending'
  ) d
  GROUP BY d.grp
$$;

REVOKE ALL ON FUNCTION operations_backlogs() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION operations_backlogs() TO platform_app;
