-- One credit or debit (DELTA = +1 or -1) as the gateway's POST /wallets/:id/credit|debit runs it:
-- the same statements, in the same order, in one transaction, as platform_app under row-level
-- security. bench/money.bench.ts fills in DELTA, TYPE and EVENT and runs it with pgbench.
\set nonce random(1, 1000000000000)
BEGIN;
SELECT set_config('app.tenant_id', :tenant::text, true);
-- lockWalletsForCaller: the wallet's lock and the caller's verified e-mail (the gateway finds it by id).
SELECT id AS wallet, currency, available, pending, frozen,
    coalesce((SELECT email_verified FROM users WHERE id = :user::uuid), false) AS verified
  FROM wallets
  WHERE tenant_id = :tenant::uuid AND user_id = :user::uuid AND currency = 'USD' AND label = 'w' || :client_id::text
  FOR UPDATE \gset
-- writeMovement: balance change, transaction row, postings.
WITH wallet AS (
  UPDATE wallets SET available = available + (DELTA), pending = pending + 0, frozen = frozen + 0, updated_at = now()
  WHERE id = :wallet::text RETURNING id, currency, available, pending, frozen, updated_at
), moved AS (
  INSERT INTO money_transactions (id, tenant_id, wallet_id, type, status, amount, currency, reason, idempotency_key,
      reference_transaction_id, counterparty_wallet_id, meta, balance_after, expires_at, created_at, updated_at)
    SELECT gen_random_uuid(), :tenant::uuid, wallet.id, 'TYPE', 'completed', 1, wallet.currency, 'bench', (:client_id::text || '-' || :nonce::text),
      NULL, NULL, '{}', jsonb_build_object('available', wallet.available, 'pending', wallet.pending, 'frozen', wallet.frozen),
      NULL::timestamptz, date_trunc('milliseconds', now()), date_trunc('milliseconds', now())
    FROM wallet
    RETURNING *
), posted AS (
  INSERT INTO ledger_postings (tenant_id, transaction_id, wallet_id, bucket, currency, amount)
    SELECT :tenant::uuid, moved.id, p.wallet_id, p.bucket, wallet.currency, p.amount
    FROM wallet, moved, jsonb_to_recordset(jsonb_build_array(
      jsonb_build_object('wallet_id', :wallet::text, 'bucket', 'available', 'amount', (DELTA)),
      jsonb_build_object('wallet_id', NULL, 'bucket', 'external', 'amount', -(DELTA)))) AS p (wallet_id text, bucket text, amount bigint)
)
SELECT moved.id AS txid, jsonb_build_object('available', wallet.available, 'pending', wallet.pending, 'frozen', wallet.frozen) AS balances,
    wallet.updated_at, wallet.available AS available
  FROM moved, wallet \gset
-- storeAnswer (services/idempotency/idempotent.ts): the outbox events of the change (the money event and the audit
-- records, enqueueEvents' INSERT) and the answer under the key, in one statement (an expired row of the
-- key is taken over).
WITH also_written AS (
  INSERT INTO outbox_events (id, tenant_id, topic, partition_key, type, source, data, schema_version, trace_id, correlation_id)
    SELECT e.id, e.tenant_id, e.topic, e.partition_key, e.type, e.source, e.data, e.schema_version, e.trace_id, e.correlation_id
    FROM jsonb_to_recordset(jsonb_build_array(
      jsonb_build_object('id', gen_random_uuid(), 'tenant_id', :tenant::uuid, 'topic', 'platform.money.events', 'partition_key', :wallet::text,
        'type', 'EVENT', 'source', 'money', 'schema_version', '1.0.0',
        'data', jsonb_build_object('wallet_id', :wallet::text, 'transaction_id', :txid::uuid, 'amount', 1, 'currency', 'USD', 'balance_after', :balances::jsonb)),
      jsonb_build_object('id', gen_random_uuid(), 'tenant_id', :tenant::uuid, 'topic', 'platform.audit.events', 'partition_key', :txid::uuid,
        'type', 'audit.record.created', 'source', 'money', 'schema_version', '1.0.0',
        'data', jsonb_build_object('action', 'money.transaction.TYPE', 'entityType', 'money_transaction', 'entityId', :txid::uuid))))
    AS e (id uuid, tenant_id uuid, topic text, partition_key text, type text, source text, data jsonb,
      schema_version text, trace_id text, correlation_id text)
)
INSERT INTO idempotency_keys (tenant_id, scope, key, request_hash, response_status, response_body, expires_at)
  VALUES (:tenant::uuid, 'bench TYPE', (:client_id::text || '-' || :nonce::text), 'hash', 200,
    jsonb_build_object('transactionId', :txid::uuid, 'balanceAfter', :balances::jsonb), now() + make_interval(hours => 24))
  ON CONFLICT (tenant_id, scope, key) DO UPDATE
    SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
        response_body = EXCLUDED.response_body, created_at = now(), expires_at = EXCLUDED.expires_at
    WHERE idempotency_keys.expires_at <= now()
  RETURNING true AS stored;
COMMIT;
