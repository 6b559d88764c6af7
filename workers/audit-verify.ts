import { parseArgs } from 'node:util';
import { config } from '../common/config';
import { isUuid } from '../common/ids';
import { createObjectStore } from '../common/object-store';
import { createDbPool } from '../db/pool';
import { describeVerification, verifyTenantChain } from '../services/audit/verify';

/**
 * `npm run audit:verify -- --tenant <id> [--archives]`: checks a tenant's audit hash chain, from its
 * first record to its head, records already moved to cold storage included: they are linked in by
 * the hashes the archive recorded, and with --archives the archive objects are read and checked as
 * well. Exit 0 and "OK, N record(s)" when intact; exit 1 naming the first broken link; exit 2 for a
 * usage error. It connects with the application role (DATABASE_URL) in the tenant's scope: it only reads.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { tenant: { type: 'string' }, 'database-url': { type: 'string' }, archives: { type: 'boolean', default: false } },
  });
  if (!values.tenant || !isUuid(values.tenant)) {
    process.stderr.write('usage: npm run audit:verify -- --tenant <tenant uuid> [--archives] [--database-url <postgres url>]\n');
    return 2;
  }
  const pool = await createDbPool(values['database-url'] ?? config().db.url, { maxPoolSize: 1, name: 'audit-verify' });
  try {
    const result = await verifyTenantChain(pool, values.tenant, {
      objectStore: createObjectStore(config().s3), checkArchives: values.archives,
    });
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
