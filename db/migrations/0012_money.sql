-- Money (document 2): wallets, their transactions, and the double-entry ledger behind every balance
-- change.
--
--   wallets              per user and currency; the three balances are the running totals of the
--                        wallet's postings, updated in the same transaction as the postings.
--   money_transactions   what the API shows: one row per operation and wallet (a transfer writes a
--                        row on each side, the incoming one referencing the outgoing one).
--   ledger_postings      append-only double entry: every transaction's postings sum to zero
--                        (checked at commit by a deferred trigger), so money is only ever moved.
--
-- Idempotency keys use the table of 0001_foundation (db/idempotent.ts): the answer is stored in the
-- same transaction as the operation, so a retry after a crash between commit and response gets the
-- committed answer.

-- Money-moving permissions are system keys (document 2 names none; see docs/decisions.md, Money):
-- the admin role holds them like every non-platform system key, a member holds none.
INSERT INTO permissions (key, module, description) VALUES
  ('money.read', 'system', 'Read wallets, balances and transactions'),
  ('money.write', 'system', 'Create wallets; credit, debit, hold, confirm, cancel and transfer'),
  ('money.reverse', 'system', 'Reverse completed transactions');

CREATE TABLE wallets (
  -- ULID (document 2): sortable by creation, and the ascending order transfers lock wallets in.
  id          text PRIMARY KEY CHECK (id ~ '^[0-9A-HJKMNP-TV-Z]{26}$'),
  tenant_id   uuid NOT NULL REFERENCES tenants (id),
  user_id     uuid NOT NULL REFERENCES users (id),
  -- ISO 4217 or a crypto code (USDT, BTC): upper-case letters and digits.
  currency    text NOT NULL CHECK (currency ~ '^[A-Z][A-Z0-9]{2,9}$'),
  label       text NOT NULL DEFAULT '' CHECK (length(label) <= 200),
  -- Minor units. Never negative: the last line of defence behind the application's checks.
  available   bigint NOT NULL DEFAULT 0 CHECK (available >= 0),
  pending     bigint NOT NULL DEFAULT 0 CHECK (pending >= 0),
  frozen      bigint NOT NULL DEFAULT 0 CHECK (frozen >= 0),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT wallets_user_currency_label UNIQUE (tenant_id, user_id, currency, label)
);

CREATE TABLE money_transactions (
  id                        uuid PRIMARY KEY,
  tenant_id                 uuid NOT NULL REFERENCES tenants (id),
  wallet_id                 text NOT NULL REFERENCES wallets (id),
  type                      text NOT NULL CHECK (type IN ('credit', 'debit', 'transfer', 'hold', 'confirm', 'cancel', 'reversal')),
  status                    text NOT NULL CHECK (status IN ('completed', 'pending', 'held', 'failed', 'canceled', 'reversed', 'confirmed')),
  amount                    bigint NOT NULL CHECK (amount > 0),
  currency                  text NOT NULL,
  reason                    text NOT NULL DEFAULT '',
  idempotency_key           text,
  -- confirm/cancel → their hold; reversal → the original; the incoming side of a transfer → the
  -- outgoing side.
  reference_transaction_id  uuid REFERENCES money_transactions (id),
  -- The other wallet of a transfer.
  counterparty_wallet_id    text REFERENCES wallets (id),
  reversed                  boolean NOT NULL DEFAULT false,
  meta                      jsonb NOT NULL DEFAULT '{}',
  -- The wallet's balances right after this transaction: {available, pending, frozen}.
  balance_after             jsonb NOT NULL,
  -- Holds: when the hold's timer fires, and when it did (an expired hold answers 422 hold-expired).
  expires_at                timestamptz,
  expired_at                timestamptz,
  created_at                timestamptz NOT NULL DEFAULT now(),
  updated_at                timestamptz NOT NULL DEFAULT now()
);
-- History pages: newest first per wallet, keyset on (created_at, id).
CREATE INDEX money_transactions_wallet_history ON money_transactions (wallet_id, created_at DESC, id DESC);
-- Counting a wallet's open holds (at most MONEY_MAX_HOLDS_PER_WALLET) and sweeping expired ones.
CREATE INDEX money_transactions_open_holds ON money_transactions (wallet_id, expires_at) WHERE status = 'held';
-- At most one reversal per original, and one confirm or cancel per hold, whatever races.
CREATE UNIQUE INDEX money_transactions_one_reversal ON money_transactions (reference_transaction_id)
  WHERE type = 'reversal';
CREATE UNIQUE INDEX money_transactions_one_settlement ON money_transactions (reference_transaction_id)
  WHERE type IN ('confirm', 'cancel');

CREATE TABLE ledger_postings (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id       uuid NOT NULL REFERENCES tenants (id),
  transaction_id  uuid NOT NULL REFERENCES money_transactions (id),
  -- NULL with bucket 'external': the tenant's account for money entering (credit) or leaving
  -- (debit, confirm) the platform, which is what makes every transaction sum to zero.
  wallet_id       text REFERENCES wallets (id),
  bucket          text NOT NULL CHECK (bucket IN ('available', 'pending', 'frozen', 'external')),
  currency        text NOT NULL,
  -- Signed: positive increases the bucket's balance.
  amount          bigint NOT NULL CHECK (amount <> 0),
  created_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT ledger_postings_external_account CHECK ((wallet_id IS NULL) = (bucket = 'external'))
);
CREATE INDEX ledger_postings_transaction ON ledger_postings (transaction_id);
CREATE INDEX ledger_postings_wallet ON ledger_postings (wallet_id, bucket) WHERE wallet_id IS NOT NULL;

-- A transaction's postings balance per currency, checked once at commit (deferred), after all of
-- them are written.
CREATE FUNCTION ledger_check_balanced() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
  IF EXISTS (
    SELECT 1 FROM ledger_postings p WHERE p.transaction_id = NEW.transaction_id
    GROUP BY p.currency HAVING sum(p.amount) <> 0
  ) THEN
    RAISE EXCEPTION 'ledger postings of transaction % do not balance', NEW.transaction_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_postings_balanced';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER ledger_postings_balanced AFTER INSERT ON ledger_postings
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_balanced();

ALTER TABLE wallets ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON wallets
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
ALTER TABLE money_transactions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON money_transactions
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
ALTER TABLE ledger_postings ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON ledger_postings
  USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

-- Money is moved, never rewritten: wallets and transactions are not deleted, postings never change.
REVOKE DELETE, TRUNCATE ON wallets, money_transactions FROM platform_app;
REVOKE UPDATE, DELETE, TRUNCATE ON ledger_postings FROM platform_app;
