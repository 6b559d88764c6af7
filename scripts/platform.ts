import { parseArgs } from 'node:util';
import { config } from '../common/config';
import { createDbPool } from '../db/pool';
import { SetupRefused, SetupUsageError, setupOwner } from './platform/setup-owner';

const USAGE = 'usage: npm run platform -- setup-owner --email <e-mail> --password <password> [--database-url <owner postgres url>]\n';

/**
 * `npm run platform -- <command>`: operator commands that run with the owner database role
 * (DATABASE_OWNER_URL), outside the gateway. Exit 0 done (or nothing to do), 1 refused or failed,
 * 2 usage error.
 */
async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { email: { type: 'string' }, password: { type: 'string' }, 'database-url': { type: 'string' } },
  });
  if (positionals[0] !== 'setup-owner' || positionals.length !== 1 || !values.email || !values.password) {
    process.stderr.write(USAGE);
    return 2;
  }
  const pool = await createDbPool(values['database-url'] ?? config().db.ownerUrl, { maxPoolSize: 1, name: 'platform-cli' });
  try {
    await setupOwner(pool, { email: values.email, password: values.password }, (line) => process.stdout.write(`${line}\n`));
    return 0;
  } catch (error) {
    if (error instanceof SetupUsageError) {
      process.stderr.write(`setup-owner: ${error.message}\n${USAGE}`);
      return 2;
    }
    if (error instanceof SetupRefused) {
      process.stderr.write(`setup-owner: ${error.message}; nothing was changed\n`);
      return 1;
    }
    throw error;
  } finally {
    await pool.end();
  }
}

main().then((code) => process.exit(code), (error: unknown) => {
  process.stderr.write(`platform: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
