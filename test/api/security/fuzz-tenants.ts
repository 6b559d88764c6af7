import { parseArgs } from 'node:util';
import { createDbPool } from '../../../db/pool';
import { startTestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { describeCall, outcomeCounts, outcomeTable, runCrossTenant } from '../../helpers/cross-tenant/run';

/**
 * `npm run fuzz:tenants -- [--every-kind false] [--concurrency N]`: the long variant of
 * test/api/security/cross-tenant.int.test.ts (docs/cross-tenant.md). Tenant B tries tenant A's ids
 * of every kind in every id slot of every operation the documents list (the test tries the kinds a
 * slot's name tells), then prints the operations × outcome table, every call that is not a 404, and
 * the figures; it exits 1 on a violation or a changed row of A. It starts its own gateway on this
 * machine's platform (`npm run up`), sends nothing elsewhere, and stops when the calls are made.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({ options: { 'every-kind': { type: 'string', default: 'true' }, concurrency: { type: 'string', default: '4' } } });
  await migrateSharedDatabase();
  const [gateway, owner] = await Promise.all([
    startTestGateway({ waitUntilReady: true }),
    createDbPool(ownerUrl(), { maxPoolSize: 4, name: 'fuzz-tenants' }),
  ]);
  try {
    const started = Date.now();
    const report = await runCrossTenant(gateway, owner, { everyKind: values['every-kind'] !== 'false', concurrency: Number(values.concurrency) });
    const write = (line = '') => process.stdout.write(`${line}\n`);
    write(outcomeTable(report));
    write();
    for (const call of report.calls.filter((candidate) => candidate.outcome !== '404')) write(`${call.outcome}: ${describeCall(call)}`);
    write();
    const counts = outcomeCounts(report.calls);
    write(`operations ${report.operations.length}, calls ${report.calls.length} (each with its control), ${Math.round((Date.now() - started) / 1000)} s`);
    write(`outcomes ${Object.entries(counts).map(([outcome, count]) => `${outcome} ${count}`).join(', ')}`);
    write(`A's tables changed: ${report.changedTables.length === 0 ? 'none' : report.changedTables.join(', ')}`);
    return counts.violation === 0 && report.changedTables.length === 0 ? 0 : 1;
  } finally {
    await Promise.all([gateway.close(), owner.end()]);
  }
}

main().then((code) => process.exit(code), (error: unknown) => {
  process.stderr.write(`fuzz:tenants failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
