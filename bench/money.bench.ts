import { parseArgs } from 'node:util';
import { config } from '../common/config';
import { newId } from '../common/ids';
import { createDbPool } from '../db/pool';
import { checkLedger } from '../services/money/ledger-check';
import { cpuSecondsOf, measure, mergedPhase, percent, printPhases, ratePerSecond as rate, startBenchGateway } from './lib/load';
import { fundedWallet, moneyApi, verifiedAccount } from './lib/money';
import { runPgbench, type PgbenchPhase } from './lib/pgbench';
import { atLeast, startResults } from './lib/results';

/**
 * Credit and debit throughput (issue 6): `concurrency` clients through the REST API (the gateway as a
 * child process: token, permission, rate limit, request audit, plan-limit cache, idempotency, the
 * money transaction), against the ceiling of the same SQL run by pgbench with the same number of
 * clients on the same database (bench/money/operation.pgbench.sql: the gateway's statements in the
 * same order, in one transaction, as platform_app under row-level security).
 *
 *   npm run bench:money -- [--concurrency 32] [--seconds 10] [--rounds 5] [--max 200000] [--gateway-node-options=--cpu-prof]
 *
 * Each client has a wallet of its own in one tenant and alternates credit and debit of 1, so the
 * phases measure the operation, not one wallet's lock. The two phases run in `rounds` alternating
 * slices (REST, pgbench, REST, ...; `seconds` each phase in all), so both see the same neighbours
 * on a shared machine; their counts and latencies are merged. The REST phase also reports the
 * gateway's CPU time per request (stable while the machine's load is not). The ledger invariant is
 * checked at the end.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      concurrency: { type: 'string', default: '32' }, seconds: { type: 'string', default: '10' }, max: { type: 'string', default: '200000' },
      rounds: { type: 'string', default: '5' },
      'gateway-node-options': { type: 'string', default: '' },
    },
  });
  const concurrency = Number(values.concurrency);
  const seconds = Number(values.seconds);
  const max = Number(values.max);
  const rounds = Number(values.rounds);
  // pgbench takes whole seconds.
  const sliceSeconds = Math.max(1, Math.round(seconds / rounds));
  const settings = config();
  const results = startResults('money', values);
  const owner = await createDbPool(settings.db.ownerUrl, { maxPoolSize: 2, name: 'bench-money-owner' });
  // One connection per concurrent request, as pgbench has: the pool size docs/decisions/money.md recommends
  // for a gateway (DATABASE_POOL_SIZE = the money requests it serves at once).
  const { child, baseUrl } = await startBenchGateway({ NODE_OPTIONS: values['gateway-node-options'], DATABASE_POOL_SIZE: String(concurrency) });
  try {
    const api = moneyApi(baseUrl);
    const account = await verifiedAccount(api, owner);
    const { tenantId, userId, token } = account;
    // pgbench's client_id counts from 0; the wallets of REST worker i and pgbench client i are w<i>.
    const wallets: string[] = [];
    for (let i = 0; i < concurrency; i += 1) wallets.push(await fundedWallet(api, account, `w${i}`, 1_000_000));

    const operation = async (worker: number, step: number) => {
      const kind = step % 2 === 0 ? 'credit' : 'debit';
      await api('POST', `/wallets/${wallets[worker]}/${kind}`, { amount: 1, currency: 'USD', reason: 'bench' }, token, newId());
    };
    const steps = new Array<number>(concurrency).fill(0);
    // Warm-up: connections, caches, JIT.
    await measure('warm-up', concurrency, 2, 2000, async (worker) => operation(worker, steps[worker]++));
    const restSlices: { latencies: number[]; seconds: number; cpuSeconds: number }[] = [];
    const pgbenchSlices: PgbenchPhase[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const latencies: number[] = [];
      const cpuBefore = cpuSecondsOf(child.pid!);
      const slice = await measure('REST slice', concurrency, sliceSeconds, max / rounds, async (worker) => {
        const t0 = performance.now();
        await operation(worker, steps[worker]++);
        latencies.push(performance.now() - t0);
      });
      restSlices.push({ latencies, seconds: slice.seconds, cpuSeconds: cpuSecondsOf(child.pid!) - cpuBefore });
      pgbenchSlices.push(runOperationPgbench({ concurrency, seconds: sliceSeconds, tenantId, userId, url: settings.db.url }));
    }
    const rest = mergedPhase('REST credit/debit (gateway)', restSlices);
    rest.cpuMsPerRequest = (restSlices.reduce((sum, slice) => sum + slice.cpuSeconds, 0) * 1000) / Math.max(1, rest.count);
    const ceiling = mergedPhase('pgbench, the same SQL (ceiling)', pgbenchSlices);

    const report = await checkLedger(owner, { tenantId });
    console.log(`${concurrency} concurrent clients, ${sliceSeconds * rounds} s per phase in ${rounds} alternating slices; ledger after the run: ${report.ok ? 'consistent' : report.violations.join('; ')}`);
    printPhases([ceiling, rest]);
    console.log(`REST / pgbench ceiling: ${percent(rate(rest), rate(ceiling))} (target 40 %)`);
    results.write({ ledgerConsistent: report.ok, phases: [ceiling, rest] }, [
      atLeast('REST credit/debit ≥ 40 % of pgbench running the same SQL (issue 6)', rate(rest) / rate(ceiling), 0.4, percent(rate(rest), rate(ceiling))),
    ]);
  } finally {
    child.kill('SIGTERM');
    await owner.end();
  }
}

/** pgbench with the operation script (credit and debit, equal weights). */
function runOperationPgbench(run: { concurrency: number; seconds: number; tenantId: string; userId: string; url: string }): PgbenchPhase {
  const template = 'bench/money/operation.pgbench.sql';
  return runPgbench({
    name: 'pgbench, the same SQL (ceiling)',
    scripts: [
      { template, fill: { '(DELTA)': '(1)', TYPE: 'credit', EVENT: 'money.wallet.credited' }, weight: 1 },
      { template, fill: { '(DELTA)': '(-1)', TYPE: 'debit', EVENT: 'money.wallet.debited' }, weight: 1 },
    ],
    concurrency: run.concurrency,
    seconds: run.seconds,
    variables: { tenant: run.tenantId, user: run.userId },
    url: run.url,
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
