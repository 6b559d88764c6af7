-- One credit or debit (DELTA = +1 or -1) as the gateway's POST /wallets/:id/credit|debit runs it:
-- the same statements, in the same order, in one transaction, as platform_app under row-level
-- security. bench/money-sync.ts fills in DELTA, TYPE and EVENT and runs it with pgbench.
\set nonce random(1, 1000000000000)
BEGIN;
SELECT set_config('app.tenant_id', :tenant::text, true);
SELECT request_hash, response_status, response_body FROM idempotency_keys
  WHERE tenant_id = :tenant::uuid AND scope = 'bench TYPE' AND key = (:client_id::text || '-' || :nonce::text) AND expires_at > now();
SELECT email_verified FROM users WHERE id = :user::uuid;
SELECT id AS wallet FROM wallets
  WHERE tenant_id = :tenant::uuid AND user_id = :user::uuid AND currency = 'USD' AND label = 'w' || :client_id::text
  ORDER BY id COLLATE "C" FOR UPDATE \gset
UPDATE wallets SET available = available + (DELTA), pending = pending + 0, frozen = frozen + 0, updated_at = now()
  WHERE id = :wallet::text RETURNING available, pending, frozen \gset
INSERT INTO money_transactions (id, tenant_id, wallet_id, type, status, amount, currency, reason, idempotency_key,
    reference_transaction_id, counterparty_wallet_id, meta, balance_after, expires_at, created_at, updated_at)
  VALUES (gen_random_uuid(), :tenant::uuid, :wallet::text, 'TYPE', 'completed', 1, 'USD', 'bench', (:client_id::text || '-' || :nonce::text),
    NULL, NULL, '{}', jsonb_build_object('available', :available::bigint, 'pending', :pending::bigint, 'frozen', :frozen::bigint), NULL,
    date_trunc('milliseconds', now()), date_trunc('milliseconds', now()))
  RETURNING id AS txid \gset
INSERT INTO ledger_postings (tenant_id, transaction_id, wallet_id, bucket, currency, amount)
  SELECT :tenant::uuid, :txid::uuid, p.wallet_id, p.bucket, 'USD', p.amount
  FROM jsonb_to_recordset(jsonb_build_array(
    jsonb_build_object('wallet_id', :wallet::text, 'bucket', 'available', 'amount', (DELTA)),
    jsonb_build_object('wallet_id', NULL, 'bucket', 'external', 'amount', -(DELTA)))) AS p (wallet_id text, bucket text, amount bigint);
INSERT INTO outbox_events (id, tenant_id, topic, partition_key, type, source, data, schema_version, trace_id, correlation_id)
  VALUES (gen_random_uuid(), :tenant::uuid, 'platform.money.events', :wallet::text, 'EVENT', 'money',
    jsonb_build_object('wallet_id', :wallet::text, 'transaction_id', :txid::uuid, 'amount', 1, 'currency', 'USD'), '1.0.0', NULL, NULL);
INSERT INTO outbox_events (id, tenant_id, topic, partition_key, type, source, data, schema_version, trace_id, correlation_id)
  VALUES (gen_random_uuid(), :tenant::uuid, 'platform.audit.events', :txid::uuid, 'audit.record.created', 'money',
    jsonb_build_object('action', 'money.transaction.TYPE', 'entityType', 'money_transaction', 'entityId', :txid::uuid), '1.0.0', NULL, NULL);
DELETE FROM idempotency_keys
  WHERE tenant_id = :tenant::uuid AND scope = 'bench TYPE' AND key = (:client_id::text || '-' || :nonce::text) AND expires_at <= now();
INSERT INTO idempotency_keys (tenant_id, scope, key, request_hash, response_status, response_body, expires_at)
  VALUES (:tenant::uuid, 'bench TYPE', (:client_id::text || '-' || :nonce::text), 'hash', 200,
    jsonb_build_object('transactionId', :txid::uuid, 'balanceAfter', jsonb_build_object('available', :available::bigint)), now() + interval '24 hours');
COMMIT;
