import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { newId, newWalletId } from '../../common/ids';
import { postings, recordMovement } from '../../services/money/movements';
import { lockWallet } from '../../services/money/wallet-operations';
import { repoRoot } from '../../common/paths';
import { migrate } from '../../db/migrate';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { createScratchDatabase, type ScratchDatabase } from '../helpers/db';

/**
 * `npm run ledger:verify` (workers/ledger-verify.ts) on a scratch database: exit 0 while the ledger
 * balances; exit 1 with a report naming each violation once a balance or a posting is tampered with.
 */
jest.setTimeout(120_000);

let db: ScratchDatabase;
let owner: DatabasePool;
const tenantId = newId();
const walletId = newWalletId();

beforeAll(async () => {
  db = await createScratchDatabase('ledger_verify');
  await migrate({ databaseUrl: db.ownerUrl, write: () => undefined });
  owner = await createDbPool(db.ownerUrl, { maxPoolSize: 2, name: 'ledger-verify-test' });
  const userId = newId();
  await owner.query(sql.unsafe`INSERT INTO tenants (id, name) VALUES (${tenantId}, 'Ledger')`);
  await owner.query(sql.unsafe`INSERT INTO users (id, email) VALUES (${userId}, ${`${userId}@example.test`})`);
  await owner.query(sql.unsafe`INSERT INTO wallets (id, tenant_id, user_id, currency) VALUES (${walletId}, ${tenantId}, ${userId}, 'USD')`);
  const actor = { tenantId, actorId: null };
  for (const [type, amount] of [['credit', 500], ['debit', 120]] as const) {
    await withTenant(owner, tenantId, async (tx) => recordMovement(tx, actor, {
      wallet: await lockWallet(tx, tenantId, walletId),
      delta: { available: type === 'credit' ? amount : -amount },
      transaction: { type, status: 'completed', amount, reason: '', meta: {}, idempotencyKey: null },
      postings: postings[type](walletId, amount),
    }));
  }
});

afterAll(async () => {
  await owner?.end();
  await db?.drop();
});

function verifyCli() {
  const result = spawnSync(process.execPath, [
    '-r', join(repoRoot, 'test/helpers/app-swc-register.cjs'), join(repoRoot, 'workers/ledger-verify.ts'),
    '--database-url', db.ownerUrl,
  ], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  return { status: result.status, out: result.stdout + result.stderr };
}

it('exits 0 with progress lines while the ledger balances', () => {
  const { status, out } = verifyCli();
  expect(out).toContain('ledger: 1 wallet(s), 2 transaction(s), 4 posting(s)');
  expect(out).toContain('wallet balances equal their postings: ok');
  expect(out).toContain('OK: the ledger balances');
  expect(status).toBe(0);
});

it('exits 1 naming a balance that differs from its postings and a posting that breaks its transaction', async () => {
  await owner.query(sql.unsafe`UPDATE wallets SET available = available + 5 WHERE id = ${walletId}`);
  await owner.query(sql.unsafe`UPDATE ledger_postings SET amount = amount + 1 WHERE id = (SELECT min(id) FROM ledger_postings WHERE wallet_id IS NULL)`);
  const { status, out } = verifyCli();
  expect(status).toBe(1);
  expect(out).toContain('currency USD: postings sum to 1, not 0');
  expect(out).toMatch(/transaction [0-9a-f-]{36} \(USD\): postings sum to 1, not 0/);
  expect(out).toContain(`wallet ${walletId} (tenant ${tenantId}) available: balance 385, postings 380`);
});
