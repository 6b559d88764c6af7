import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { requestHash, runIdempotent } from '../../services/idempotency/idempotent';
import { insertPostings } from '../../db/queries/money/ledger.queries';
import { newId, newWalletId } from '../../common/ids';
import { startTestGateway, type TestGateway } from '../helpers/app';
import { appUrl, migrateSharedDatabase } from '../helpers/db';
import { registerAccount, type RegisteredAccount } from '../helpers/identity';

/**
 * The money store's own guarantees (migration 0012), below any route: postings must balance at
 * commit, balances never go negative, postings cannot be rewritten, and an idempotency key runs its
 * operation once even when two requests race.
 */

let gateway: TestGateway;
let app: DatabasePool;
let account: RegisteredAccount;
let walletId: string;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  app = await createDbPool(appUrl(), { maxPoolSize: 4, name: 'money-ledger-test' });
  account = await registerAccount(gateway);
  walletId = newWalletId();
  await withTenant(app, account.tenant.id, (tx) => tx.query(sql.unsafe`
    INSERT INTO wallets (id, tenant_id, user_id, currency) VALUES (${walletId}, ${account.tenant.id}, ${account.user.id}, 'USD')
  `));
});

afterAll(async () => {
  await gateway?.close();
  await app?.end();
});

/** A credit of `amount`: the transaction row, its postings (balanced unless told otherwise) and the balance. */
async function credit(amount: number, externalAmount = -amount): Promise<string> {
  const transactionId = newId();
  await withTenant(app, account.tenant.id, async (tx) => {
    await tx.query(sql.unsafe`UPDATE wallets SET available = available + ${amount} WHERE id = ${walletId}`);
    await tx.query(sql.unsafe`
      INSERT INTO money_transactions (id, tenant_id, wallet_id, type, status, amount, currency, balance_after)
      VALUES (${transactionId}, ${account.tenant.id}, ${walletId}, 'credit', 'completed', ${amount}, 'USD', '{}')
    `);
    await insertPostings(tx, {
      tenantId: account.tenant.id, transactionId, currency: 'USD',
      postings: [{ walletId, bucket: 'available', amount }, { walletId: null, bucket: 'external', amount: externalAmount }],
    });
  });
  return transactionId;
}

const balance = z.object({ available: z.string() });

describe('the ledger', () => {
  it('commits balanced postings and refuses unbalanced ones at commit', async () => {
    await credit(100);
    await expect(credit(50, -49)).rejects.toMatchObject({ constraint: 'ledger_postings_balanced' });
    const { available } = await withTenant(app, account.tenant.id, (tx) =>
      tx.one(sql.type(balance)`SELECT available::text FROM wallets WHERE id = ${walletId}`));
    expect(available).toBe('100');
  });

  it('never lets a balance go below zero and never lets postings be rewritten', async () => {
    await expect(withTenant(app, account.tenant.id, (tx) =>
      tx.query(sql.unsafe`UPDATE wallets SET available = available - 1000 WHERE id = ${walletId}`))).rejects.toMatchObject({ constraint: 'wallets_available_check' });
    await expect(withTenant(app, account.tenant.id, (tx) =>
      tx.query(sql.unsafe`UPDATE ledger_postings SET amount = 1`))).rejects.toThrow(/permission denied/);
  });
});

describe('runIdempotent', () => {
  const at = () => ({ tenantId: account.tenant.id, scope: 'POST /test', key: newId(), ttlHours: 1 });
  const withBody = (key: ReturnType<typeof at>, body: unknown) => ({ ...key, hash: requestHash(body) });

  it('runs once for concurrent requests with one key and replays the first answer', async () => {
    const key = at();
    let runs = 0;
    const answers = await Promise.all(Array.from({ length: 5 }, () => runIdempotent(app, withBody(key, { amount: 1 }), async () => {
      runs += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { statusCode: 200, body: { run: runs } };
    })));
    const committed = await withTenant(app, account.tenant.id, (tx) => tx.one(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM idempotency_keys WHERE key = ${key.key}`));
    expect(committed.n).toBe(1);
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
  });

  it('answers 409 idempotency-conflict for the same key with another body', async () => {
    const key = at();
    await runIdempotent(app, withBody(key, { amount: 1 }), async () => ({ statusCode: 200, body: {} }));
    await expect(runIdempotent(app, withBody(key, { amount: 2 }), async () => ({ statusCode: 200, body: {} })))
      .rejects.toMatchObject({ type: 'idempotency-conflict', status: 409 });
  });

  it('rolls back the work of a retry whose key is answered already and replays that answer', async () => {
    const key = at();
    await runIdempotent(app, withBody(key, { amount: 1 }), async () => ({ statusCode: 200, body: { run: 1 } }));
    const retry = await runIdempotent(app, withBody(key, { amount: 1 }), async (tx) => {
      await tx.query(sql.unsafe`UPDATE idempotency_keys SET response_status = 500 WHERE key = ${key.key}`);
      return { statusCode: 200, body: { run: 2 } };
    });
    expect(retry).toEqual({ statusCode: 200, body: { run: 1 } });
    const refused = runIdempotent(app, withBody(key, { amount: 1 }), async () => { throw new Error('refused now'); });
    await expect(refused).resolves.toEqual({ statusCode: 200, body: { run: 1 } });
    await expect(runIdempotent(app, withBody(key, { amount: 2 }), async () => { throw new Error('refused now'); }))
      .rejects.toMatchObject({ type: 'idempotency-conflict', status: 409 });
  });

  it('takes over an expired key: the operation runs again and its answer replaces the old one', async () => {
    const key = at();
    await runIdempotent(app, withBody(key, { amount: 1 }), async () => ({ statusCode: 200, body: { run: 1 } }));
    await withTenant(app, account.tenant.id, (tx) => tx.query(sql.unsafe`
      UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = ${key.key}`));
    const again = await runIdempotent(app, withBody(key, { amount: 2 }), async () => ({ statusCode: 201, body: { run: 2 } }));
    expect(again).toEqual({ statusCode: 201, body: { run: 2 } });
    const replay = await runIdempotent(app, withBody(key, { amount: 2 }), async () => ({ statusCode: 200, body: { run: 3 } }));
    expect(replay).toEqual({ statusCode: 201, body: { run: 2 } });
  });
});
