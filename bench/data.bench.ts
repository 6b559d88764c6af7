import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { config } from '../common/config';
import { createDbPool } from '../db/pool';
import { withTenant } from '../db/tenant';
import { benchListStatement, BENCH_LIST_QUERY } from './lib/data-list';
import { ensureSeed, existingSeed, sampleContactIds, SEED_PASSWORD } from './lib/data-seed';
import { alternate, apiClient, cpuOf, interleave, measure, percent, printPhases, rateOf, startBenchGateway } from './lib/load';
import { atLeast, below, figure, startResults } from './lib/results';

/**
 * The data layer's performance (issue 16), side by side in one run on this machine, from a table of
 * `--rows` contacts across `--tenants` tenants (seeded once, bench/lib/data-seed.ts):
 * 1. GET /v1/data/crm/contacts/:id through the full pipeline against the authenticated hello route
 *    (GET /v1/gateway/hello/secure) as the same caller. Targets: >= 80 % of hello, >= 2 600 req/s.
 * 2. A list with three filters, an order and an embed of companies, 20 rows (bench/lib/data-list.ts):
 *    p99 < 20 ms at 8 concurrent clients; its EXPLAIN (ANALYZE, BUFFERS) shows the indexes it uses.
 * 3. The query language's own cost: the same list through a hand-written route running the SQL text
 *    our planner produced (bench/lib/data-gateway.ts). Target: ours >= 90 % of it.
 *
 *   npm run bench:data -- [--concurrency 8] [--seconds 5] [--rows 1000000] [--tenants 100]
 *     [--companies 10000] [--rounds 2] [--max 200000] [--skip-seed]
 *
 * The caller is a member whose role holds settings.read, crm.contacts.read and crm.companies.read
 * (not the owner, who skips the permission lookup). One gateway process serves every phase; each
 * phase reports that process's CPU per request and starts with the machine's load average. The two
 * sides of phases 1 and 3 alternate in `--rounds` rounds, so a change of load hits both alike; every
 * route first runs unmeasured (compiling its code, opening connections, warming caches).
 * --skip-seed uses the seed recorded, whatever its size; without it, a seed of other sizes is replaced.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      concurrency: { type: 'string', default: '8' }, seconds: { type: 'string', default: '5' }, max: { type: 'string', default: '200000' },
      rows: { type: 'string', default: '1000000' }, tenants: { type: 'string', default: '100' }, companies: { type: 'string' },
      rounds: { type: 'string', default: '2' }, 'skip-seed': { type: 'boolean', default: false },
    },
  });
  const concurrency = Number(values.concurrency);
  const seconds = Number(values.seconds);
  const max = Number(values.max);
  const rounds = Number(values.rounds);
  const rows = Number(values.rows);
  const size = { rows, tenants: Number(values.tenants), companies: Number(values.companies ?? rows / 100) };

  const cfg = config();
  const results = startResults('data', values);
  const gateway = await startBenchGateway({}, 'bench/lib/data-gateway.ts');
  const owner = await createDbPool(cfg.db.ownerUrl, { maxPoolSize: 2, name: 'bench-data-owner' });
  const app = await createDbPool(cfg.db.url, { maxPoolSize: 1, name: 'bench-data-app' });
  try {
    const call = apiClient(gateway.baseUrl);
    const seed = values['skip-seed'] ? await existingSeed(owner) : await ensureSeed(owner, call, size);
    const token = await signIn(call, seed.readerEmail, seed.tenantId);
    const ids = await sampleContactIds(owner, seed.tenantId, 1000);
    if (ids.length === 0) throw new Error('the seed has no contacts in its first tenant');

    let next = 0;
    const steps = {
      hello: async () => { await call('GET', '/gateway/hello/secure', undefined, token); },
      byId: async () => { await call('GET', `/data/crm/contacts/${ids[(next += 1) % ids.length]}`, undefined, token); },
      list: async () => { await call('GET', `/data/crm/contacts?${BENCH_LIST_QUERY}`, undefined, token); },
      handWritten: async () => { await call('GET', '/bench/data/contacts', undefined, token); },
    };
    // The two list routes must answer the same records, or phase 3 compares different work.
    const [ours, theirs] = await Promise.all([
      call('GET', `/data/crm/contacts?${BENCH_LIST_QUERY}`, undefined, token), call('GET', '/bench/data/contacts', undefined, token),
    ]);
    if (JSON.stringify(ours.data) !== JSON.stringify(theirs.data)) throw new Error('the hand-written route answers other records than ours');
    const pageRows = (ours.data as unknown[]).length;

    console.log(`\nseed: ${seed.rows} contacts, ${seed.companies} companies across ${seed.tenants} tenants; reading tenant ${seed.tenantId}`);
    console.log(`concurrency ${concurrency}; up to ${seconds} s or ${max} requests per phase; sides alternate in ${rounds} rounds`);
    const pid = gateway.child.pid!;
    for (const step of Object.values(steps)) await measure('warm-up', concurrency, Math.min(1, seconds), max, step);

    heading('1. one record by id against the authenticated hello route');
    const [hellos, reads] = await alternate(rounds, (suffix) => [
      () => measure(`GET /gateway/hello/secure${suffix}`, concurrency, seconds / rounds, max, steps.hello, pid),
      () => measure(`GET /data/crm/contacts/:id${suffix}`, concurrency, seconds / rounds, max, steps.byId, pid),
    ]);
    printPhases(interleave(hellos, reads));
    const readRate = rateOf(reads);
    console.log(`GET /data/crm/contacts/:id: ${readRate.toFixed(0)} req/s (target 2 600); ${percent(readRate, rateOf(hellos))} of hello (target 80 %); `
      + `by server CPU per request ${percent(cpuOf(hellos), cpuOf(reads))}`);

    heading(`2. the list (${pageRows} rows of 20 asked for): ${BENCH_LIST_QUERY}`);
    const listed = await measure(`GET /data/crm/contacts?… (${concurrency} clients)`, concurrency, seconds, max, steps.list, pid);
    printPhases([listed]);
    console.log(`p99 ${listed.p99.toFixed(1)} ms (target < 20 ms at 8 clients)`);
    const { statement, settings } = benchListStatement(seed.tenantId);
    console.log(`\nthe statement (parameters: ${JSON.stringify(statement.values)}):\n${statement.sql.trim()}\n`);
    const explained = await withTenant(app, seed.tenantId, (tx) => tx.anyFirst({
      ...statement, sql: `EXPLAIN (ANALYZE, BUFFERS) ${statement.sql}`, parser: z.object({ 'QUERY PLAN': z.string() }),
    }), settings);
    console.log(explained.join('\n'));
    const indexes = [...new Set(explained.flatMap((line) => [...line.matchAll(/Index (?:Only )?Scan (?:Backward )?(?:using|on) "?([\w$]+)"?/g)].map((match) => match[1])))];
    console.log(`indexes used: ${indexes.join(', ') || 'none'}`);

    heading('3. the query language\'s own cost: the list through our route against a hand-written one running the same SQL');
    const [handWritten, language] = await alternate(rounds, (suffix) => [
      () => measure(`hand-written route, same SQL${suffix}`, concurrency, seconds / rounds, max, steps.handWritten, pid),
      () => measure(`GET /data/crm/contacts?…${suffix}`, concurrency, seconds / rounds, max, steps.list, pid),
    ]);
    printPhases(interleave(handWritten, language));
    console.log(`ours / hand-written: ${percent(rateOf(language), rateOf(handWritten))} (target 90 %); `
      + `by server CPU per request ${percent(cpuOf(handWritten), cpuOf(language))}`);
    results.write({ seed: { rows: seed.rows, companies: seed.companies, tenants: seed.tenants }, hellos, reads, listed, indexes, handWritten, language }, [
      atLeast('`GET /data/crm/contacts/:id` ≥ 80 % of the authenticated hello route (issue 16)', readRate / rateOf(hellos), 0.8,
        `${percent(readRate, rateOf(hellos))} (by server CPU ${percent(cpuOf(hellos), cpuOf(reads))})`),
      atLeast('`GET /data/crm/contacts/:id` ≥ 2 600 req/s (issue 16)', readRate, 2600, `${figure(readRate)} req/s`),
      below(`the list (3 filters, order, embed, 20 rows of ${figure(seed.rows)}) p99 < 20 ms at 8 clients (issue 16)`,
        concurrency === 8 ? listed.p99 : NaN, 20, `${listed.p99.toFixed(1)} ms`),
      atLeast('the query language ≥ 90 % of a hand-written route running the same SQL (issue 16)', rateOf(language) / rateOf(handWritten), 0.9,
        `${percent(rateOf(language), rateOf(handWritten))} (by server CPU ${percent(cpuOf(handWritten), cpuOf(language))})`),
    ]);
  } finally {
    await Promise.all([owner.end(), app.end()]);
    await new Promise((resolve) => {
      gateway.child.once('exit', resolve);
      gateway.child.kill('SIGTERM');
    });
  }
}

/**
 * An access token of the account in the tenant. The reader belongs to two tenants (its own and the
 * seed's), so a login answers a tenant selection unless a choice is remembered.
 */
async function signIn(call: ReturnType<typeof apiClient>, email: string, tenantId: string): Promise<string> {
  const session = await call('POST', '/auth/login', { email, password: SEED_PASSWORD });
  const pair = session.requiresTenantSelection
    ? await call('POST', '/auth/select-tenant', { sessionToken: session.sessionToken, tenantId })
    : await call('POST', '/auth/switch-tenant', { tenantId }, String(session.accessToken));
  return String(pair.accessToken);
}

function heading(title: string): void {
  console.log(`\n## ${title}\nload average at the start: ${loadavg().map((load) => load.toFixed(2)).join(' ')}`);
}


main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
