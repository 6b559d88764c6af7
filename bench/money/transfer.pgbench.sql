-- One transfer of 1 from the client's wallet SRC_LABEL<client_id> to its wallet DST_LABEL<client_id>, as the
-- moneyTransfer workflow's local activity runs it (activities/money/transfer.activities.ts inside
-- db/idempotent.ts's runIdempotent): the same statements, in the same order, in one transaction, as
-- the worker's role (the owner). bench/money-flows.ts fills in SRC_LABEL and DST_LABEL (a and b, either way).
\set nonce random(1, 1000000000000)
BEGIN;
SELECT set_config('app.tenant_id', :tenant::text, true);
SELECT request_hash, response_status, response_body FROM idempotency_keys
  WHERE tenant_id = :tenant::uuid AND scope = 'bench transfer' AND key = (:client_id::text || '-' || :nonce::text) AND expires_at > now();
SELECT email_verified FROM users WHERE id = :user::uuid;
WITH locked AS (
  SELECT id, label FROM wallets
  WHERE tenant_id = :tenant::uuid AND user_id = :user::uuid AND currency = 'USD' AND label IN ('SRC_LABEL' || :client_id::text, 'DST_LABEL' || :client_id::text)
  ORDER BY id COLLATE "C" FOR UPDATE
)
SELECT max(id) FILTER (WHERE label = 'SRC_LABEL' || :client_id::text) AS source, max(id) FILTER (WHERE label = 'DST_LABEL' || :client_id::text) AS destination
  FROM locked \gset
UPDATE wallets SET available = available + (-1), pending = pending + 0, frozen = frozen + 0, updated_at = now()
  WHERE id = :source::text RETURNING available, pending, frozen \gset
INSERT INTO money_transactions (id, tenant_id, wallet_id, type, status, amount, currency, reason, idempotency_key,
    reference_transaction_id, counterparty_wallet_id, meta, balance_after, expires_at, created_at, updated_at)
  VALUES (gen_random_uuid(), :tenant::uuid, :source::text, 'transfer', 'completed', 1, 'USD', 'bench', (:client_id::text || '-' || :nonce::text),
    NULL, :destination::text, '{"direction": "out"}', jsonb_build_object('available', :available::bigint, 'pending', :pending::bigint, 'frozen', :frozen::bigint), NULL,
    date_trunc('milliseconds', now()), date_trunc('milliseconds', now()))
  RETURNING id AS outgoing \gset
INSERT INTO ledger_postings (tenant_id, transaction_id, wallet_id, bucket, currency, amount)
  SELECT :tenant::uuid, :outgoing::uuid, p.wallet_id, p.bucket, 'USD', p.amount
  FROM jsonb_to_recordset(jsonb_build_array(
    jsonb_build_object('wallet_id', :source::text, 'bucket', 'available', 'amount', -1),
    jsonb_build_object('wallet_id', :destination::text, 'bucket', 'available', 'amount', 1))) AS p (wallet_id text, bucket text, amount bigint);
UPDATE wallets SET available = available + 1, pending = pending + 0, frozen = frozen + 0, updated_at = now()
  WHERE id = :destination::text RETURNING available, pending, frozen \gset
INSERT INTO money_transactions (id, tenant_id, wallet_id, type, status, amount, currency, reason, idempotency_key,
    reference_transaction_id, counterparty_wallet_id, meta, balance_after, expires_at, created_at, updated_at)
  VALUES (gen_random_uuid(), :tenant::uuid, :destination::text, 'transfer', 'completed', 1, 'USD', 'bench', NULL,
    :outgoing::uuid, :source::text, '{"direction": "in"}', jsonb_build_object('available', :available::bigint, 'pending', :pending::bigint, 'frozen', :frozen::bigint), NULL,
    date_trunc('milliseconds', now()), date_trunc('milliseconds', now()))
  RETURNING id AS incoming \gset
INSERT INTO outbox_events (id, tenant_id, topic, partition_key, type, source, data, schema_version, trace_id, correlation_id)
  VALUES (gen_random_uuid(), :tenant::uuid, 'platform.money.events', :source::text, 'money.wallet.transfer', 'money',
    jsonb_build_object('wallet_id', :source::text, 'transaction_id', :outgoing::uuid, 'incoming_transaction_id', :incoming::uuid, 'amount', 1), '1.0.0', NULL, NULL);
INSERT INTO outbox_events (id, tenant_id, topic, partition_key, type, source, data, schema_version, trace_id, correlation_id)
  VALUES (gen_random_uuid(), :tenant::uuid, 'platform.audit.events', :outgoing::uuid, 'audit.record.created', 'money',
    jsonb_build_object('action', 'money.transaction.transferred', 'entityType', 'money_transaction', 'entityId', :outgoing::uuid), '1.0.0', NULL, NULL);
INSERT INTO outbox_events (id, tenant_id, topic, partition_key, type, source, data, schema_version, trace_id, correlation_id)
  VALUES (gen_random_uuid(), :tenant::uuid, 'platform.audit.events', :incoming::uuid, 'audit.record.created', 'money',
    jsonb_build_object('action', 'money.transaction.transferred', 'entityType', 'money_transaction', 'entityId', :incoming::uuid), '1.0.0', NULL, NULL);
DELETE FROM idempotency_keys
  WHERE tenant_id = :tenant::uuid AND scope = 'bench transfer' AND key = (:client_id::text || '-' || :nonce::text) AND expires_at <= now();
INSERT INTO idempotency_keys (tenant_id, scope, key, request_hash, response_status, response_body, expires_at)
  VALUES (:tenant::uuid, 'bench transfer', (:client_id::text || '-' || :nonce::text), 'hash', 200,
    jsonb_build_object('transactionId', :outgoing::uuid, 'balanceAfter', jsonb_build_object('available', :available::bigint)), now() + interval '24 hours');
COMMIT;
