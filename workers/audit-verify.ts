import { parseArgs } from 'node:util';
import { config } from '../common/config';
import { isUuid } from '../common/ids';
import { createDbPool } from '../db/pool';
import { describeVerification, verifyTenantChain } from './audit/verify';

/**
 * `npm run audit:verify -- --tenant <id>`: checks a tenant's audit hash chain. Exit 0 and
 * "OK, N record(s)" when intact; exit 1 naming the first broken link; exit 2 for a usage error.
 * It connects with the application role (DATABASE_URL) in the tenant's scope: it only reads.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({ options: { tenant: { type: 'string' }, 'database-url': { type: 'string' } } });
  if (!values.tenant || !isUuid(values.tenant)) {
    process.stderr.write('usage: npm run audit:verify -- --tenant <tenant uuid> [--database-url <postgres url>]\n');
    return 2;
  }
  const pool = await createDbPool(values['database-url'] ?? config().db.url, { maxPoolSize: 1, name: 'audit-verify' });
  try {
    const result = await verifyTenantChain(pool, values.tenant);
    process.stdout.write(`${describeVerification(result)}\n`);
    return result.ok ? 0 : 1;
  } finally {
    await pool.end();
  }
}

main().then((code) => process.exit(code), (error: unknown) => {
  process.stderr.write(`audit:verify: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(2);
});
