import { parseArgs } from 'node:util';
import { config } from '../common/config';
import { newId } from '../common/ids';
import { createDbPool } from '../db/pool';
import { checkLedger } from '../services/money/ledger-check';
import { startMoneyWorkerProcess, type WorkerProcess } from '../test/helpers/money-worker';
import { overloadSend, runOverloadScenario } from '../test/helpers/money-overload';
import { percentile, startBenchGateway } from './lib/load';
import { fundedWallet, moneyApi, verifiedAccount, type BenchAccount } from './lib/money';
import { below, startResults } from './lib/results';

/**
 * Overload (issue 19): the scenario of test/api/money/overload-burst.test.ts, measured. One tenant
 * sends `burst` transfers at once (a refused one is retried after its Retry-After, growing) while
 * another, already at work, makes steady transfers with `steady` clients; the gateway and the money
 * Worker run as child processes, the Worker on a task queue of its own. Prints the steady tenant's
 * p50 and p99 during the burst and every status either tenant was answered, then checks the ledger.
 *
 *   npm run bench:money-overload -- [--burst 500] [--steady 2] [--pause-ms 100] [--bound <MONEY_MAX_IN_FLIGHT_PER_TENANT>]
 *
 * Without --bound the gateway runs with the configured bound (default 8), so the bench shows what a
 * deployment with that setting gives its other tenants.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      burst: { type: 'string', default: '500' }, steady: { type: 'string', default: '2' },
      'pause-ms': { type: 'string', default: '100' }, bound: { type: 'string' },
    },
  });
  const burstSize = Number(values.burst);
  const steadyClients = Number(values.steady);
  const settings = config();
  const results = startResults('money-overload', values);
  const taskQueue = `bench.money-overload.${newId()}`;
  const owner = await createDbPool(settings.db.ownerUrl, { maxPoolSize: 2, name: 'bench-money-overload-owner' });
  const gateway = await startBenchGateway({ MONEY_TASK_QUEUE: taskQueue, ...(values.bound ? { MONEY_MAX_IN_FLIGHT_PER_TENANT: values.bound } : {}) });
  let worker: WorkerProcess | undefined;
  try {
    worker = await startMoneyWorkerProcess(taskQueue);
    const api = moneyApi(gateway.baseUrl);
    const send = overloadSend(gateway.baseUrl);
    const [bursting, steady] = [await verifiedAccount(api, owner), await verifiedAccount(api, owner)];
    // Enough pairs that the burst's transfers in flight seldom wait on each other's wallet locks.
    const wallets = async (account: BenchAccount, count: number) => {
      const ids: string[] = [];
      for (let i = 0; i < count; i += 1) ids.push(await fundedWallet(api, account, `overload-${i}`, 1_000_000));
      return ids;
    };

    const started = performance.now();
    const outcome = await runOverloadScenario({
      send,
      burst: { token: bursting.token, wallets: await wallets(bursting, 64) },
      steady: { token: steady.token, wallets: await wallets(steady, 2 * steadyClients) },
      burstSize, steadyClients, steadyPauseMs: Number(values['pause-ms']),
    });
    const seconds = (performance.now() - started) / 1000;

    const ledgers = await Promise.all([bursting, steady].map((account) => checkLedger(owner, { tenantId: account.tenantId })));
    const ms = (p: number) => percentile(outcome.steadyLatencies, p).toFixed(1);
    console.log(`burst of ${burstSize} transfers from one tenant, ${steadyClients} steady client(s) of another (pause ${values['pause-ms']} ms), `
      + `in-flight bound ${values.bound ?? 'as configured'}; ${seconds.toFixed(1)} s until every key was answered`);
    console.log('| tenant | transfers | p50 ms | p99 ms | answers by status |');
    console.log('|---|---|---|---|---|');
    console.log(`| steady, during the burst | ${outcome.steadyLatencies.length} | ${ms(50)} | ${ms(99)} | ${JSON.stringify(outcome.steadyStatuses)} |`);
    console.log(`| bursting (429 retried) | ${outcome.burstKeys.length} | - | - | ${JSON.stringify(outcome.burstStatuses)} |`);
    console.log(`every key answered its transaction: ${outcome.transactions.size === outcome.burstKeys.length + outcome.steadyKeys.length ? 'yes' : 'NO'}; `
      + `ledger: ${ledgers.every((report) => report.ok) ? 'consistent' : ledgers.flatMap((report) => report.violations).join('; ')}`);
    const steadyP99 = percentile(outcome.steadyLatencies, 99);
    results.write({
      seconds, steady: { transfers: outcome.steadyLatencies.length, p50: percentile(outcome.steadyLatencies, 50), p99: steadyP99, statuses: outcome.steadyStatuses },
      burst: { transfers: outcome.burstKeys.length, statuses: outcome.burstStatuses },
      everyKeyAnswered: outcome.transactions.size === outcome.burstKeys.length + outcome.steadyKeys.length, ledgersConsistent: ledgers.every((report) => report.ok),
    }, [
      below('one tenant\'s burst does not take money from the others: the steady tenant\'s p99 < 1 s (issue 19)', steadyP99, 1000,
        `steady tenant p99 ${steadyP99.toFixed(0)} ms during a ${burstSize}-transfer burst`),
    ]);
  } finally {
    await worker?.stop('SIGTERM');
    gateway.child.kill('SIGTERM');
    await owner.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
