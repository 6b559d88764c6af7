import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { z } from 'zod';
import { config } from '../common/config';
import { newId } from '../common/ids';
import { pgSsl } from '../db/pg-ssl';
import { createDbPool, sql } from '../db/pool';
import { withTenant } from '../db/tenant';
import { TenantReader } from '../db/tenant-reads';
import { cpuSecondsOfCommand, measure, percent, printPhases, rateOf, type Phase } from './lib/load';
import { figure, reported, startResults } from './lib/results';

/**
 * What a read in the tenant's transaction costs the caller and PostgreSQL, below the gateway (the
 * round trip under issue 16's read by id), in `--rounds` rounds of three sides:
 * 1. the bare statement on a pipelined `pg` connection, no transaction, no tenant: the ceiling;
 * 2. TenantReader.rows (db/tenant-reads.ts): the tenant's settings and the statement, one Sync;
 * 3. slonik's withTenant (db/tenant.ts): BEGIN, the settings, the statement, COMMIT, each awaited.
 * The statement reads the tenant setting back, so every side's answer is checked and what is
 * measured is the driver and the protocol, not a table. Each phase reports this process's CPU per
 * read (the caller's side) and PostgreSQL's (all its processes).
 *
 *   npm run bench:tenant-reads -- [--concurrency 8] [--seconds 4] [--rounds 3]
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { concurrency: { type: 'string', default: '8' }, seconds: { type: 'string', default: '4' }, rounds: { type: 'string', default: '3' } },
  });
  const concurrency = Number(values.concurrency);
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const cfg = config();
  const results = startResults('data-tenant-reads', values);
  const tenantId = newId();
  const slonik = await createDbPool(cfg.db.url, { maxPoolSize: concurrency, name: 'bench-tenant-reads' });
  const reader = await TenantReader.open(cfg.db.url, slonik, concurrency);
  const bare = new pg.Pool({ connectionString: cfg.db.url, max: concurrency, pipeline: true, ssl: pgSsl(cfg.db.ssl) });
  const probe = sql.type(z.object({ tenant: z.string() }))`SELECT current_setting('app.tenant_id', true) AS tenant`;
  const expectTenant = (tenant: unknown, expected: string) => {
    if (tenant !== expected) throw new Error(`read ${String(tenant)} where ${expected} was set`);
  };
  const sides: Record<string, () => Promise<void>> = {
    'bare statement, no transaction (ceiling)': async () => expectTenant((await bare.query<{ tenant: string | null }>(probe.sql)).rows[0].tenant ?? '', ''),
    'TenantReader.rows (settings + statement, one Sync)': async () => expectTenant((await reader.rows(tenantId, probe))[0].tenant, tenantId),
    'withTenant (BEGIN, settings, statement, COMMIT)': async () => expectTenant((await withTenant(slonik, tenantId, (tx) => tx.one(probe))).tenant, tenantId),
  };
  try {
    console.log(`concurrency ${concurrency}; ${seconds} s per phase; sides in ${rounds} rounds; load average at the start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    const bySide = new Map<string, Phase[]>();
    const postgresMs = new Map<string, number>();
    for (const [name, step] of Object.entries(sides)) await measure(`${name} (warm-up)`, concurrency, 1, 1e9, step);
    for (let round = 1; round <= rounds; round += 1) {
      for (const [name, step] of Object.entries(sides)) {
        const postgresBefore = cpuSecondsOfCommand('postgres');
        const phase = await measure(`${name} (${round}/${rounds})`, concurrency, seconds, 1e9, step, process.pid);
        postgresMs.set(name, (postgresMs.get(name) ?? 0) + (cpuSecondsOfCommand('postgres') - postgresBefore) * 1000);
        bySide.set(name, [...(bySide.get(name) ?? []), phase]);
        console.log(`${phase.name}: ${(phase.count / phase.seconds).toFixed(0)} reads/s`);
      }
    }
    console.log('');
    printPhases([...bySide.values()].flat().sort((a, b) => a.name.localeCompare(b.name)));
    console.log('\n| side | reads/s | caller CPU µs/read | PostgreSQL CPU µs/read | reads/s of the ceiling |');
    console.log('|---|---|---|---|---|');
    const ceiling = rateOf([...bySide.values()][0]);
    const summary = [...bySide].map(([name, phases]) => {
      const reads = phases.reduce((sum, phase) => sum + phase.count, 0);
      const callerUs = phases.reduce((sum, phase) => sum + phase.cpuMsPerRequest! * phase.count, 0) / reads * 1000;
      const postgresUs = postgresMs.get(name)! / reads * 1000;
      console.log(`| ${name} | ${rateOf(phases).toFixed(0)} | ${callerUs.toFixed(1)} | ${postgresUs.toFixed(1)} | ${percent(rateOf(phases), ceiling)} |`);
      return { side: name, readsPerSecond: rateOf(phases), callerCpuUs: callerUs, postgresCpuUs: postgresUs };
    });
    results.write({ phases: [...bySide.values()].flat(), sides: summary }, summary.map((side) => reported(`${side.side} (no target named)`,
      `${figure(side.readsPerSecond)} reads/s, ${side.callerCpuUs.toFixed(1)} µs caller CPU and ${side.postgresCpuUs.toFixed(1)} µs PostgreSQL CPU per read`)));
  } finally {
    await Promise.all([reader.end(), bare.end(), slonik.end()]);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
