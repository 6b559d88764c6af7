import { parseArgs } from 'node:util';
import { config } from '../common/config';
import { newId } from '../common/ids';
import { createDbPool } from '../db/pool';
import { checkLedger } from '../workers/money/ledger-check';
import { measure, printPhases, ratePerSecond as rate, startBenchGateway, type Phase } from './lib/load';
import { fundedWallet, moneyApi, verifiedAccount } from './lib/money';
import { runPgbench } from './lib/pgbench';

/**
 * Credit and debit throughput (issue 6): `concurrency` clients through the REST API (the gateway as a
 * child process: token, permission, rate limit, request audit, plan-limit cache, idempotency, the
 * money transaction), against the ceiling of the same SQL run by pgbench with the same number of
 * clients on the same database (bench/money/operation.pgbench.sql: the gateway's statements in the
 * same order, in one transaction, as platform_app under row-level security).
 *
 *   npm run bench:money -- [--concurrency 32] [--seconds 10] [--max 200000] [--gateway-node-options '--cpu-prof']
 *
 * Each client has a wallet of its own in one tenant and alternates credit and debit of 1, so the
 * phases measure the operation, not one wallet's lock. The REST phase also reports the gateway's CPU
 * time per request (stable while the machine's load is not). The ledger invariant is checked at the end.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      concurrency: { type: 'string', default: '32' }, seconds: { type: 'string', default: '10' }, max: { type: 'string', default: '200000' },
      'gateway-node-options': { type: 'string', default: '' },
    },
  });
  const concurrency = Number(values.concurrency);
  const seconds = Number(values.seconds);
  const max = Number(values.max);
  const settings = config();
  const owner = await createDbPool(settings.db.ownerUrl, { maxPoolSize: 2, name: 'bench-money-owner' });
  // One connection per concurrent request, as pgbench has: the pool size docs/decisions.md recommends
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
    const rest = await measure('REST credit/debit (gateway)', concurrency, seconds, max, async (worker) => operation(worker, steps[worker]++), child.pid);
    const ceiling = runOperationPgbench({ concurrency, seconds, tenantId, userId, url: settings.db.url });

    const report = await checkLedger(owner, { tenantId });
    console.log(`${concurrency} concurrent clients, ${seconds} s per phase; ledger after the run: ${report.ok ? 'consistent' : report.violations.join('; ')}`);
    printPhases([ceiling, rest]);
    console.log(`REST / pgbench ceiling: ${((rate(rest) / rate(ceiling)) * 100).toFixed(0)} % (target 40 %)`);
  } finally {
    child.kill('SIGTERM');
    await owner.end();
  }
}

/** pgbench with the operation script (credit and debit, equal weights). */
function runOperationPgbench(run: { concurrency: number; seconds: number; tenantId: string; userId: string; url: string }): Phase {
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
