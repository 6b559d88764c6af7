import { createDbPool, type DatabasePool } from '../../db/pool';
import { checkLedger } from '../../services/money/ledger-check';
import { ownerUrl } from './db';

let owner: Promise<DatabasePool> | undefined;

/**
 * Asserts the ledger invariant (services/money/ledger-check.ts) in the test database, across every
 * tenant or for one: call it after every money scenario. The owner pool is opened once per test
 * file; close it in afterAll with closeLedgerPool().
 */
export async function expectLedgerConsistent(tenantId?: string): Promise<void> {
  owner ??= createDbPool(ownerUrl(), { maxPoolSize: 1, name: 'ledger-check-test' });
  const report = await checkLedger(await owner, { tenantId });
  expect(report.violations).toEqual([]);
}

export async function closeLedgerPool(): Promise<void> {
  const pool = owner;
  owner = undefined;
  await (await pool)?.end();
}
