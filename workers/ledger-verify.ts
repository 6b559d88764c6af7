import { parseArgs } from 'node:util';
import { config } from '../common/config';
import { isUuid } from '../common/ids';
import { createDbPool } from '../db/pool';
import { checkLedger } from '../services/money/ledger-check';

/**
 * `npm run ledger:verify [-- --tenant <id>] [--database-url <owner url>]`: checks the money ledger
 * invariant across every tenant (or one), as the owner role (DATABASE_OWNER_URL), which sees every
 * tenant's rows. Exit 0 when it holds; 1 with a report of each violation; 2 for a usage error.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({ options: { tenant: { type: 'string' }, 'database-url': { type: 'string' } } });
  if (values.tenant !== undefined && !isUuid(values.tenant)) {
    process.stderr.write('usage: npm run ledger:verify -- [--tenant <tenant uuid>] [--database-url <postgres owner url>]\n');
    return 2;
  }
  const pool = await createDbPool(values['database-url'] ?? config().db.ownerUrl, { maxPoolSize: 1, name: 'ledger-verify' });
  try {
    const report = await checkLedger(pool, { tenantId: values.tenant, progress: (line) => process.stdout.write(`${line}\n`) });
    if (report.ok) {
      process.stdout.write('OK: the ledger balances\n');
      return 0;
    }
    process.stdout.write(`VIOLATIONS (${report.violations.length}):\n${report.violations.map((line) => `  ${line}`).join('\n')}\n`);
    return 1;
  } finally {
    await pool.end();
  }
}

main().then((code) => process.exit(code), (error: unknown) => {
  process.stderr.write(`ledger:verify: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(2);
});
