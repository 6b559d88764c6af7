-- One transfer of 1 from the client's wallet SRC_LABEL<client_id> to its wallet DST_LABEL<client_id>, as the
-- moneyTransfer workflow's local activity runs it (activities/money/transfer.activities.ts inside
-- services/idempotency/idempotent.ts's runIdempotent): the same statements, in the same order, in one transaction, as
-- the worker's role (the owner). bench/money-flows.bench.ts fills in SRC_LABEL and DST_LABEL (a and b, either way).
\set nonce random(1, 1000000000000)
BEGIN;
SELECT set_config('app.tenant_id', :tenant::text, true);
-- lockWalletsForCaller: both wallets locked in ascending id order, and the caller's verified e-mail
-- (the activity finds them by id).
WITH locked AS (
  SELECT id, label, coalesce((SELECT email_verified FROM users WHERE id = :user::uuid), false) AS verified FROM wallets
  WHERE tenant_id = :tenant::uuid AND user_id = :user::uuid AND currency = 'USD' AND label IN ('SRC_LABEL' || :client_id::text, 'DST_LABEL' || :client_id::text)
  ORDER BY id COLLATE "C" FOR UPDATE
)
SELECT max(id) FILTER (WHERE label = 'SRC_LABEL' || :client_id::text) AS source, max(id) FILTER (WHERE label = 'DST_LABEL' || :client_id::text) AS destination
  FROM locked \gset
-- writeMovement of the outgoing side: balance, row, both postings.
WITH wallet AS (
  UPDATE wallets SET available = available + (-1), pending = pending + 0, frozen = frozen + 0, updated_at = now()
  WHERE id = :source::text RETURNING id, currency, available, pending, frozen, updated_at
), moved AS (
  INSERT INTO money_transactions (id, tenant_id, wallet_id, type, status, amount, currency, reason, idempotency_key,
      reference_transaction_id, counterparty_wallet_id, meta, balance_after, expires_at, created_at, updated_at)
    SELECT gen_random_uuid(), :tenant::uuid, wallet.id, 'transfer', 'completed', 1, wallet.currency, 'bench', (:client_id::text || '-' || :nonce::text),
      NULL, :destination::text, '{"direction": "out"}', jsonb_build_object('available', wallet.available, 'pending', wallet.pending, 'frozen', wallet.frozen),
      NULL::timestamptz, date_trunc('milliseconds', now()), date_trunc('milliseconds', now())
    FROM wallet
    RETURNING *
), posted AS (
  INSERT INTO ledger_postings (tenant_id, transaction_id, wallet_id, bucket, currency, amount)
    SELECT :tenant::uuid, moved.id, p.wallet_id, p.bucket, wallet.currency, p.amount
    FROM wallet, moved, jsonb_to_recordset(jsonb_build_array(
      jsonb_build_object('wallet_id', :source::text, 'bucket', 'available', 'amount', -1),
      jsonb_build_object('wallet_id', :destination::text, 'bucket', 'available', 'amount', 1))) AS p (wallet_id text, bucket text, amount bigint)
)
SELECT moved.id AS outgoing, jsonb_build_object('available', wallet.available, 'pending', wallet.pending, 'frozen', wallet.frozen) AS balances,
    wallet.updated_at
  FROM moved, wallet \gset
-- writeMovement of the incoming side: balance and row (its postings hang on the outgoing row).
WITH wallet AS (
  UPDATE wallets SET available = available + 1, pending = pending + 0, frozen = frozen + 0, updated_at = now()
  WHERE id = :destination::text RETURNING id, currency, available, pending, frozen, updated_at
), moved AS (
  INSERT INTO money_transactions (id, tenant_id, wallet_id, type, status, amount, currency, reason, idempotency_key,
      reference_transaction_id, counterparty_wallet_id, meta, balance_after, expires_at, created_at, updated_at)
    SELECT gen_random_uuid(), :tenant::uuid, wallet.id, 'transfer', 'completed', 1, wallet.currency, 'bench', NULL,
      :outgoing::uuid, :source::text, '{"direction": "in"}', jsonb_build_object('available', wallet.available, 'pending', wallet.pending, 'frozen', wallet.frozen),
      NULL::timestamptz, date_trunc('milliseconds', now()), date_trunc('milliseconds', now())
    FROM wallet
    RETURNING *
), posted AS (
  INSERT INTO ledger_postings (tenant_id, transaction_id, wallet_id, bucket, currency, amount)
    SELECT :tenant::uuid, moved.id, p.wallet_id, p.bucket, wallet.currency, p.amount
    FROM wallet, moved, jsonb_to_recordset('[]'::jsonb) AS p (wallet_id text, bucket text, amount bigint)
)
SELECT moved.id AS incoming, wallet.updated_at AS incoming_updated_at
  FROM moved, wallet \gset
-- storeAnswer (services/idempotency/idempotent.ts): the outbox events of the change (the money event and the audit
-- records, enqueueEvents' INSERT) and the answer under the key, in one statement (an expired row of the
-- key is taken over).
WITH also_written AS (
  INSERT INTO outbox_events (id, tenant_id, topic, partition_key, type, source, data, schema_version, trace_id, correlation_id)
    SELECT e.id, e.tenant_id, e.topic, e.partition_key, e.type, e.source, e.data, e.schema_version, e.trace_id, e.correlation_id
    FROM jsonb_to_recordset(jsonb_build_array(
      jsonb_build_object('id', gen_random_uuid(), 'tenant_id', :tenant::uuid, 'topic', 'platform.money.events', 'partition_key', :source::text,
        'type', 'money.wallet.transfer', 'source', 'money', 'schema_version', '1.0.0',
        'data', jsonb_build_object('wallet_id', :source::text, 'transaction_id', :outgoing::uuid, 'incoming_transaction_id', :incoming::uuid, 'amount', 1)),
      jsonb_build_object('id', gen_random_uuid(), 'tenant_id', :tenant::uuid, 'topic', 'platform.audit.events', 'partition_key', :outgoing::uuid,
        'type', 'audit.record.created', 'source', 'money', 'schema_version', '1.0.0',
        'data', jsonb_build_object('action', 'money.transaction.transferred', 'entityType', 'money_transaction', 'entityId', :outgoing::uuid)),
      jsonb_build_object('id', gen_random_uuid(), 'tenant_id', :tenant::uuid, 'topic', 'platform.audit.events', 'partition_key', :incoming::uuid,
        'type', 'audit.record.created', 'source', 'money', 'schema_version', '1.0.0',
        'data', jsonb_build_object('action', 'money.transaction.transferred', 'entityType', 'money_transaction', 'entityId', :incoming::uuid))))
    AS e (id uuid, tenant_id uuid, topic text, partition_key text, type text, source text, data jsonb,
      schema_version text, trace_id text, correlation_id text)
)
INSERT INTO idempotency_keys (tenant_id, scope, key, request_hash, response_status, response_body, expires_at)
  VALUES (:tenant::uuid, 'bench transfer', (:client_id::text || '-' || :nonce::text), 'hash', 200,
    jsonb_build_object('transactionId', :outgoing::uuid, 'balanceAfter', :balances::jsonb), now() + make_interval(hours => 24))
  ON CONFLICT (tenant_id, scope, key) DO UPDATE
    SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
        response_body = EXCLUDED.response_body, created_at = now(), expires_at = EXCLUDED.expires_at
    WHERE idempotency_keys.expires_at <= now()
  RETURNING true AS stored;
COMMIT;
