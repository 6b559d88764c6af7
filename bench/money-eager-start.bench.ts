import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Client, WithStartWorkflowOperation } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { config } from '../common/config';
import { temporalConnectionOptions } from '../common/temporal/connection-options';
import { newId } from '../common/ids';
import { platformDataConverter } from '../common/temporal/data-converter';
import { bundleWorkflows, createDomainWorker } from '../workers/temporal/worker';
import { cpuSecondsOf, measure, rateOf, recordedTemporalPid, type Phase } from './lib/load';
import { reported, startResults } from './lib/results';
import { noopDone } from './money/noop.messages';
import type { benchNoop } from './money/noop.workflow';

/**
 * Eager workflow start, one of issue 19's levers, measured on the money flows' Temporal ceiling
 * (bench/money/noop.workflow.ts: a workflow of one local activity that does nothing). Eager start
 * hands the new workflow's first task back in the start's answer to a Worker in the starting
 * process (it shares the client's NativeConnection), skipping the server's task matching. Three ways
 * to run the no-op, client and Worker in this one process, alternating in `rounds`:
 *   - update-with-start, as the gateway starts a transfer (services/money/workflow-client.ts);
 *   - start, then wait for the result;
 *   - eager start, then wait for the result.
 * Each reports its rate, latency, and the CPU per workflow of this process and of the Temporal server.
 *
 *   npm run bench:money-eager -- [--concurrency 1] [--seconds 8] [--rounds 2]
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { concurrency: { type: 'string', default: '1' }, seconds: { type: 'string', default: '8' }, rounds: { type: 'string', default: '2' } },
  });
  const concurrency = Number(values.concurrency);
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const results = startResults('money-eager-start', values);
  const settings = config();
  const taskQueue = `bench.eager.${newId()}`;
  const temporalPid = recordedTemporalPid();
  if (temporalPid === undefined) throw new Error('no Temporal dev server recorded: start the platform (npm run up)');
  const connection = await NativeConnection.connect(temporalConnectionOptions(settings.temporal));
  const dataConverter = await platformDataConverter(settings.temporalCodec);
  const worker = await createDomainWorker({
    connection, namespace: settings.temporal.namespace, taskQueue,
    workflowBundle: await bundleWorkflows(require.resolve('./money/noop.workflow')),
    activities: { noop: () => Promise.resolve('done') }, dataConverter,
  });
  const running = worker.run();
  const client = new Client({ connection, namespace: settings.temporal.namespace, dataConverter });
  const options = () => ({ workflowId: `bench.eager:${newId()}`, taskQueue });
  let eager = 0;
  let started = 0;
  const ways: Record<string, () => Promise<unknown>> = {
    'update-with-start': () => client.workflow.executeUpdateWithStart(noopDone, {
      startWorkflowOperation: new WithStartWorkflowOperation<typeof benchNoop>('benchNoop', { ...options(), workflowIdConflictPolicy: 'USE_EXISTING' }),
    }),
    'start, then the result': () => client.workflow.execute<typeof benchNoop>('benchNoop', options()),
    'eager start, then the result': async () => {
      const handle = await client.workflow.start<typeof benchNoop>('benchNoop', { ...options(), requestEagerStart: true });
      started += 1;
      // The server starts a workflow eagerly only while the Worker has a free workflow task slot.
      if (handle.eagerlyStarted) eager += 1;
      return handle.result();
    },
  };
  console.log(`${concurrency} in flight, ${seconds} s per way in ${rounds} slices; load average at the start: ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
  console.log('| way | round | per second | p50 ms | p99 ms | this process CPU ms/workflow | Temporal server CPU ms/workflow |');
  console.log('|---|---|---|---|---|---|---|');
  try {
    // Unmeasured first: connections, the Worker's workflow cache, JIT.
    for (const step of Object.values(ways)) await measure('warm-up', concurrency, 1, 1000, async () => { await step(); });
    const byWay = new Map<string, Phase[]>();
    const cpu: { way: string; round: number; thisProcessMsPerWorkflow: number; temporalServerMsPerWorkflow: number }[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      for (const [name, step] of Object.entries(ways)) {
        const [own, server] = [cpuSecondsOf(process.pid), cpuSecondsOf(temporalPid)];
        const phase = await measure(name, concurrency, seconds / rounds, Number.MAX_SAFE_INTEGER, async () => { await step(); });
        const perWorkflow = (cpuSeconds: number) => ((cpuSeconds * 1000) / Math.max(1, phase.count)).toFixed(1);
        const [ownMs, serverMs] = [perWorkflow(cpuSecondsOf(process.pid) - own), perWorkflow(cpuSecondsOf(temporalPid) - server)];
        console.log(`| ${name} | ${round} | ${(phase.count / phase.seconds).toFixed(0)} | ${phase.p50.toFixed(1)} | ${phase.p99.toFixed(1)} | ${ownMs} | ${serverMs} |`);
        byWay.set(name, [...(byWay.get(name) ?? []), phase]);
        cpu.push({ way: name, round, thisProcessMsPerWorkflow: Number(ownMs), temporalServerMsPerWorkflow: Number(serverMs) });
      }
    }
    console.log(`eager starts granted: ${eager} of ${started}`);
    results.write({ eagerStartsGranted: eager, eagerStartsAsked: started, phases: [...byWay.values()].flat(), cpu }, [
      reported('the no-op workflow started three ways (no target named; a lever of issue 19)', [...byWay].map(([name, phases]) =>
        `${name}: ${rateOf(phases).toFixed(0)}/s, p50 ${phases.map((phase) => phase.p50.toFixed(1)).join(' / ')} ms`).join('; ')),
    ]);
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
