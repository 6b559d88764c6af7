-- Subscribe streams in fewer round trips (issue 18, Performance). A forwarding group (a tenant's
-- gRPC Subscribe stream, services/events/consumers/forwarded-batch.ts) read the receipts and dead
-- letters of each fetched batch in one tenant transaction and claimed the receipts of what it
-- forwarded in another: BEGIN, set_config, the statement, COMMIT, twice per batch, while a stream of
-- a tenant publishing 20 events a second fetches about one event per batch. The two functions below
-- do each in one statement, as migration 0021 did for identity: SECURITY INVOKER, so they run as
-- platform_app under row-level security; auth_enter_tenant sets the tenant transaction-locally (a
-- statement called alone is its own transaction, so the setting ends with it), and every statement
-- names the tenant as well. Output columns are qualified: in PL/pgSQL they are variables too.

-- Of p_event_ids, those the group has a receipt for (dead_letter false) and those it has a dead
-- letter of (dead_letter true): what a batch reads before its first event is forwarded.
CREATE FUNCTION events_forwarded_known(p_tenant_id uuid, p_group text, p_event_ids uuid[])
RETURNS TABLE (event_id uuid, dead_letter boolean)
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
  PERFORM auth_enter_tenant(p_tenant_id);
  RETURN QUERY
    SELECT r.event_id, false FROM event_receipts r
    WHERE r.tenant_id = p_tenant_id AND r.consumer_group = p_group AND r.event_id = ANY (p_event_ids)
    UNION ALL
    SELECT d.event_id, true FROM event_dead_letters d
    WHERE d.tenant_id = p_tenant_id AND d.consumer_group = p_group AND d.event_id = ANY (p_event_ids);
END $$;

-- What a batch settles before its offsets are committed, atomically: the receipts of the events it
-- forwarded (p_claimed with p_expiries, NULL keeping a receipt forever; a receipt another member
-- claimed meanwhile stays as it is), and the dead letters of the redeliveries among them resolved.
-- Returns the events whose dead letter this resolved.
CREATE FUNCTION events_forwarded_settle(
  p_tenant_id uuid, p_group text, p_claimed uuid[], p_expiries timestamptz[], p_redelivered uuid[]
)
RETURNS SETOF uuid
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
  PERFORM auth_enter_tenant(p_tenant_id);
  INSERT INTO event_receipts (tenant_id, consumer_group, event_id, expires_at)
  SELECT p_tenant_id, p_group, c.event_id, c.expires_at FROM unnest(p_claimed, p_expiries) AS c (event_id, expires_at)
  ON CONFLICT (tenant_id, consumer_group, event_id) DO NOTHING;
  RETURN QUERY
    UPDATE event_dead_letters d SET status = 'resolved', resolved_at = now(), updated_at = now()
    WHERE d.tenant_id = p_tenant_id AND d.consumer_group = p_group AND d.event_id = ANY (p_redelivered)
      AND d.status IN ('pending', 'retrying')
    RETURNING d.event_id;
END $$;
