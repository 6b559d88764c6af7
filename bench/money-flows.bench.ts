import { parseArgs } from 'node:util';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { connectTemporal } from '../common/temporal/client';
import { config } from '../common/config';
import { newId } from '../common/ids';
import { createDbPool } from '../db/pool';
import { checkLedger } from '../services/money/ledger-check';
import { startMoneyWorkerProcess, startWorkerProcess } from '../test/helpers/money-worker';
import {
  cpuSecondsOf, cpuSecondsOfCommand, machineTicks, measure, mergedPhase, percent, ratePerSecond as rate, recordedTemporalPid, startBenchGateway, type Phase,
} from './lib/load';
import { fundedWallet, moneyApi, verifiedAccount } from './lib/money';
import { runPgbench } from './lib/pgbench';
import { allOf, atLeast, atMost, startResults } from './lib/results';
import { noopDone } from './money/noop.messages';
import type { benchNoop } from './money/noop.workflow';

/**
 * Hold and transfer throughput (issue 6): `concurrency` clients through the REST API (the gateway and
 * the money Worker as child processes, the Worker on a task queue of its own) placing transfers,
 * then holds, then confirming those holds, against two ceilings:
 *
 *   - Temporal: the same dev server running bench/money/noop.workflow.ts, the transfer workflow's
 *     shape (update-with-start, one local activity, the update answers) with no database work, from
 *     a client in this process to a Worker child process of its own;
 *   - PostgreSQL: pgbench running the transfer's SQL (bench/money/transfer.pgbench.sql: both
 *     wallets locked, two balance updates, two rows, postings, outbox rows, the stored answer, in one
 *     transaction) with the same number of clients.
 *
 *   npm run bench:money-flows -- [--concurrency 32] [--seconds 10] [--rounds 5] [--max 200000] [--temporal-pid <pid>]
 *                               [--results money-flows] (the results file's name: bench/temporal-postgres.sh writes its own)
 *
 * Each client moves money between two wallets of its own (direction alternating) and holds on a
 * third, so the phases measure the operations, not one wallet's lock. Per phase it reports the CPU
 * time per request of the gateway, the Worker, the Temporal server (its pid from --temporal-pid
 * or the bring-up scripts' pid file) and PostgreSQL (all its processes), and how busy the machine's
 * CPUs were. The no-op, transfer and hold phases run in `rounds` alternating slices (`seconds` each
 * phase in all), merged, so each is compared with a ceiling measured under the same neighbours:
 * the dev server is shared. The ledger invariant is checked at the end.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      concurrency: { type: 'string', default: '32' }, seconds: { type: 'string', default: '10' }, max: { type: 'string', default: '200000' },
      'temporal-pid': { type: 'string' }, rounds: { type: 'string', default: '5' }, results: { type: 'string', default: 'money-flows' },
    },
  });
  const results = startResults(values.results, values);
  const rounds = Number(values.rounds);
  const concurrency = Number(values.concurrency);
  const seconds = Number(values.seconds);
  const max = Number(values.max);
  const settings = config();
  const moneyQueue = `bench.money.${newId()}`;
  const noopQueue = `bench.noop.${newId()}`;
  const owner = await createDbPool(settings.db.ownerUrl, { maxPoolSize: 2, name: 'bench-money-flows-owner' });
  // One database connection per concurrent operation in the gateway and the Worker (its local
  // activities), the pool size docs/decisions/money.md recommends (DATABASE_POOL_SIZE).
  const poolSize = { DATABASE_POOL_SIZE: String(concurrency) };
  const [gateway, moneyWorker, noopWorker, temporal] = await Promise.all([
    // All clients are one tenant: its in-flight bound (issue 19) is as many as there are clients.
    startBenchGateway({
      MONEY_TASK_QUEUE: moneyQueue, MONEY_MAX_HOLDS_PER_WALLET: String(1_000_000), GRPC_CALL_TIMEOUT_MS: '30000',
      MONEY_MAX_IN_FLIGHT_PER_TENANT: String(concurrency), ...poolSize,
    }),
    startMoneyWorkerProcess(moneyQueue, poolSize),
    startWorkerProcess('bench/money/noop-worker.ts', 'noop worker running', [noopQueue]),
    connectTemporal(settings.temporal, settings.temporalCodec),
  ]);
  const processes = { gateway: gateway.child.pid!, worker: moneyWorker.pid, temporal: temporalPid(values['temporal-pid']) };
  try {
    const api = moneyApi(gateway.baseUrl);
    const account = await verifiedAccount(api, owner);
    const { tenantId, userId, token } = account;
    // pgbench's client_id counts from 0: the wallets of REST client i and pgbench client i are a<i> and b<i>.
    const pairs: [string, string][] = [];
    const holdWallets: string[] = [];
    for (let i = 0; i < concurrency; i += 1) {
      pairs.push([await fundedWallet(api, account, `a${i}`, 1_000_000), await fundedWallet(api, account, `b${i}`, 1_000_000)]);
      holdWallets.push(await fundedWallet(api, account, `h${i}`, 1_000_000));
    }

    const steps = new Array<number>(concurrency).fill(0);
    const transfer = async (client: number) => {
      const [a, b] = steps[client]++ % 2 === 0 ? pairs[client] : [...pairs[client]].reverse();
      await api('POST', '/transfers', { fromWalletId: a, toWalletId: b, amount: 1, currency: 'USD', reason: 'bench' }, token, newId());
    };
    const placed: string[] = [];
    const hold = async (client: number) => {
      const answer = await api<{ id: string }>('POST', `/wallets/${holdWallets[client]}/hold`, { amount: 1, currency: 'USD', ttl: '1h', reason: 'bench' }, token, newId());
      placed.push(answer.id);
    };
    const confirm = async () => {
      await api('POST', `/holds/${placed.pop()!}/confirm`, {}, token, newId());
    };
    const noop = async () => {
      await temporal.client.workflow.executeUpdateWithStart(noopDone, {
        startWorkflowOperation: new WithStartWorkflowOperation<typeof benchNoop>('benchNoop', {
          workflowId: `bench.noop:${newId()}`, taskQueue: noopQueue, workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      });
    };

    // Warm-up: connections, caches, JIT, the workflow caches of both Workers.
    await measure('warm-up', concurrency, 2, 2000, transfer);
    await measure('warm-up', concurrency, 2, 2000, noop);
    const slices: Record<'noop' | 'transfer' | 'hold', { row: Row; latencies: number[] }[]> = { noop: [], transfer: [], hold: [] };
    const sliced = async (kind: keyof typeof slices, pids: Parameters<typeof withCpu>[0], step: (client: number) => Promise<void>) => {
      const latencies: number[] = [];
      const row = await withCpu(pids, () => measure(kind, concurrency, seconds / rounds, max / rounds, async (client) => {
        const t0 = performance.now();
        await step(client);
        latencies.push(performance.now() - t0);
      }));
      slices[kind].push({ row, latencies });
    };
    for (let round = 0; round < rounds; round += 1) {
      await sliced('noop', { ...processes, worker: noopWorker.pid, gateway: undefined }, noop);
      await sliced('transfer', processes, transfer);
      await sliced('hold', processes, hold);
    }
    const rows: Row[] = [
      mergedRow('Temporal ceiling: update-with-start, no-op workflow + 1 local activity', slices.noop),
      mergedRow('REST transfer (gateway → workflow)', slices.transfer),
      mergedRow('REST hold (gateway → workflow)', slices.hold),
    ];
    // Every hold placed is confirmed, so the phase also ends the holds' workflows.
    rows.push(await withCpu(processes, () => measure('REST confirm of those holds (update)', concurrency, 600, placed.length, confirm)));
    rows.push(await withCpu({}, () => Promise.resolve(runPgbench({
      name: 'pgbench, the transfer SQL (ceiling)',
      scripts: [
        { template: 'bench/money/transfer.pgbench.sql', fill: { SRC_LABEL: 'a', DST_LABEL: 'b' }, weight: 1 },
        { template: 'bench/money/transfer.pgbench.sql', fill: { SRC_LABEL: 'b', DST_LABEL: 'a' }, weight: 1 },
      ],
      concurrency, seconds, variables: { tenant: tenantId, user: userId }, url: settings.db.ownerUrl,
    }))));

    const report = await checkLedger(owner, { tenantId });
    console.log(`${concurrency} concurrent clients, ${seconds} s per phase (${rounds} alternating slices); ledger after the run: ${report.ok ? 'consistent' : report.violations.join('; ')}`);
    printRows(rows);
    const [noopCeiling, transfers, holds, confirms, pgbench] = rows.map((row) => row.phase);
    const ratio = (a: Phase, b: Phase) => percent(rate(a), rate(b));
    console.log(`REST transfer / Temporal no-op ceiling: ${ratio(transfers, noopCeiling)} (target 70 %)`);
    console.log(`REST hold / Temporal no-op ceiling: ${ratio(holds, noopCeiling)}; confirm: ${ratio(confirms, noopCeiling)}`);
    console.log(`REST transfer / pgbench transfer ceiling: ${ratio(transfers, pgbench)}`);
    // Issue 19's targets name one client and 32 clients: a run of other concurrency measures neither.
    const at = (clients: number, value: number) => (concurrency === clients ? value : NaN);
    const transferCpu = Object.values(rows[1].cpu).reduce((sum, ms) => sum + ms, 0);
    results.write({ ledgerConsistent: report.ok, rows }, [
      atLeast('REST transfers ≥ 70 % of a no-op workflow of the same shape (issue 6)', rate(transfers) / rate(noopCeiling), 0.7, ratio(transfers, noopCeiling)),
      atMost('one client: transfer p50 ≤ 15 ms (issue 19)', at(1, transfers.p50), 15, `${transfers.p50.toFixed(1)} ms`),
      allOf('32 clients: ≥ 150 transfers/s and holds/s, p99 ≤ 500 ms, ≤ 12 ms CPU per transfer (issue 19)', [
        atLeast('', at(32, Math.min(rate(transfers), rate(holds))), 150, `${rate(transfers).toFixed(0)} / ${rate(holds).toFixed(0)} per s`),
        atMost('', at(32, Math.max(transfers.p99, holds.p99)), 500, `p99 ${transfers.p99.toFixed(0)} / ${holds.p99.toFixed(0)} ms`),
        atMost('', at(32, transferCpu), 12, `${transferCpu.toFixed(1)} ms CPU per transfer`),
      ]),
    ]);
  } finally {
    await temporal.connection.close();
    await Promise.all([moneyWorker.stop('SIGTERM'), noopWorker.stop('SIGTERM')]);
    gateway.child.kill('SIGTERM');
    await owner.end();
  }
}

interface Row {
  phase: Phase;
  /** CPU ms per request of each named process. */
  cpu: Record<string, number>;
  /** Share of the machine's CPU time that was busy during the phase. */
  busy: number;
}

const CPU_COLUMNS = ['gateway', 'worker', 'temporal', 'postgres'] as const;

/**
 * Runs a phase and charges each named process's CPU time to its requests, and PostgreSQL's (all its
 * processes: the platform's transactions and, with PostgreSQL persistence, Temporal's); also the
 * machine's busy share.
 */
async function withCpu(pids: Partial<Record<Exclude<(typeof CPU_COLUMNS)[number], 'postgres'>, number | undefined>>, run: () => Promise<Phase>): Promise<Row> {
  const named = Object.entries(pids).filter((entry): entry is [string, number] => entry[1] !== undefined);
  const counters: Array<[string, () => number]> = [...named.map(([name, pid]): [string, () => number] => [name, () => cpuSecondsOf(pid)]),
    ['postgres', () => cpuSecondsOfCommand('postgres')]];
  const before = counters.map(([, seconds]) => seconds());
  const machineBefore = machineTicks();
  const phase = await run();
  const machineAfter = machineTicks();
  const cpu = Object.fromEntries(counters.map(([name, seconds], i) => [name, ((seconds() - before[i]) * 1000) / Math.max(1, phase.count)]));
  const busy = (machineAfter.busy - machineBefore.busy) / Math.max(1, machineAfter.total - machineBefore.total);
  return { phase, cpu, busy };
}

/** Slices of one phase as one row: counts, durations and CPU added, percentiles over all their latencies. */
function mergedRow(name: string, slices: readonly { row: Row; latencies: number[] }[]): Row {
  const phase = mergedPhase(name, slices.map(({ row, latencies }) => ({ latencies, seconds: row.phase.seconds })));
  const names = Object.keys(slices[0]?.row.cpu ?? {});
  const cpu = Object.fromEntries(names.map((cpuOf) =>
    [cpuOf, slices.reduce((sum, { row }) => sum + row.cpu[cpuOf] * row.phase.count, 0) / Math.max(1, phase.count)]));
  const busy = slices.reduce((sum, { row }) => sum + row.busy * row.phase.seconds, 0) / Math.max(1e-9, phase.seconds);
  return { phase, cpu, busy };
}

/** The Temporal dev server's pid: given, or the one the bring-up scripts recorded; undefined leaves its column out. */
function temporalPid(given: string | undefined): number | undefined {
  return given ? Number(given) : recordedTemporalPid();
}

function printRows(rows: readonly Row[]): void {
  console.log('| phase | count | per second | p50 ms | p99 ms | gateway CPU ms/req | worker CPU ms/req | Temporal server CPU ms/req | PostgreSQL CPU ms/req | machine CPU busy |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const { phase, cpu, busy } of rows) {
    const costs = CPU_COLUMNS.map((name) => (cpu[name] === undefined ? '-' : cpu[name].toFixed(2))).join(' | ');
    console.log(`| ${phase.name} | ${phase.count} | ${rate(phase).toFixed(0)} | ${phase.p50.toFixed(1)} | ${phase.p99.toFixed(1)} | ${costs} | ${(busy * 100).toFixed(0)} % |`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
