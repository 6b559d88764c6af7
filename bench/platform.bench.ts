import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { config } from '../common/config';
import { createKafka } from '../common/kafka';
import { connectTemporal } from '../common/temporal/client';
import { createDbPool } from '../db/pool';
import { httpCaller, percentile } from './lib/load';
import { seeded } from './lib/random';
import { RESULTS_DIR, startResults } from './lib/results';
import { consumerLags, databaseBacklogs, judgeDrained, taskQueueBacklogs, type Backlog } from './platform/drain';
import { drive, Recorder } from './platform/drive';
import { benchTenants, MIX } from './platform/mix';
import { ProcessSampler } from './platform/processes';
import { growthOf, judgeGrowth, perMinute, type Growth } from './platform/soak';
import { platformTargets, SOAK_MINUTES } from './platform/targets';

/**
 * `npm run bench:platform -- [--minutes 10] [--tenants 100] [--rate 100] [--warmup-minutes 5] [--seed 1]`
 *
 * The whole platform under a realistic load, as `npm run up` runs it (either profile): requests of
 * the mix in bench/platform/mix.ts (mostly reads, plus money, records, files, events, audit and
 * logins) arriving at `rate` per second over `tenants` tenants, for `minutes`. The platform keeps
 * its own limits: each tenant's requests stay under its rate limit, as a hundred tenants' users
 * would from their own addresses.
 *
 * Reported: throughput and p50/p99 per route family, errors by type (429s apart), and the CPU,
 * memory and open files of every process of the platform, sampled every 5 s. Once the load stops,
 * the run waits (at most `--settle-seconds`) for the work it left to be done, and ends by checking:
 * - Kafka consumer lag, Temporal's task-queue backlogs, the outbox, the scan queue and the audit
 *   buffer back to zero (bench/platform/drain.ts);
 * - no process restarted; in a run of 10 minutes or more (a soak: `--minutes 30`), the memory and
 *   open files of the application's processes within 10 % between the first minute after the
 *   warm-up and the last minute of the load (bench/platform/soak.ts).
 * Exit 0 when nothing is violated. The run is written to bench/results/platform.json (`--results`);
 * docs/performance/platform.md reports the latest. test/integration/platform-bench.int.test.ts runs a
 * quick variant in `npm test`: that it runs and its invariants hold, not its figures.
 */
const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    tenants: { type: 'string', default: '100' },
    rate: { type: 'string', default: '100' },
    'warmup-minutes': { type: 'string' },
    'settle-seconds': { type: 'string', default: '180' },
    'max-in-flight': { type: 'string', default: '256' },
    seed: { type: 'string', default: '1' },
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
    results: { type: 'string', default: join(RESULTS_DIR, 'platform.json') },
  },
});
const SECONDS = Number(values.minutes) * 60;
const WARMUP_SECONDS = values['warmup-minutes'] === undefined ? Math.min(300, SECONDS / 5) : Number(values['warmup-minutes']) * 60;

interface Drained { backlogs: Backlog[]; seconds: number }

/** Reads every backlog until all are zero or the settle time is over. */
async function waitDrained(read: () => Promise<Backlog[]>): Promise<Drained> {
  const started = Date.now();
  for (;;) {
    const backlogs = await read();
    const waiting = judgeDrained(backlogs);
    const seconds = (Date.now() - started) / 1000;
    if (waiting.length === 0 || seconds > Number(values['settle-seconds'])) return { backlogs, seconds };
    process.stderr.write(`${seconds.toFixed(0)} s after the load: ${waiting.join('; ')}\n`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

function familyRows(recorder: Recorder, seconds: number) {
  return [...recorder.families].sort(([a], [b]) => a.localeCompare(b)).map(([family, record]) => {
    const sorted = [...record.latencies].sort((a, b) => a - b);
    return {
      family, answered: sorted.length, perSecond: sorted.length / seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99),
      errors: Object.fromEntries(record.errors), rateLimited: record.rateLimited,
    };
  });
}

function report(rows: ReturnType<typeof familyRows>, recorder: Recorder, growth: readonly Growth[], drained: Drained, violations: readonly string[]): void {
  console.log('\n| route family | answered | per second | p50 ms | p99 ms | errors | 429 |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) {
    const errors = Object.values(row.errors).reduce((sum, count) => sum + count, 0);
    console.log(`| ${row.family} | ${row.answered} | ${row.perSecond.toFixed(1)} | ${row.p50.toFixed(1)} | ${row.p99.toFixed(1)} | ${errors} | ${row.rateLimited} |`);
  }
  const errorKinds = rows.flatMap((row) => Object.entries(row.errors).map(([kind, count]) => `${row.family}: ${kind} × ${count}`));
  console.log(`\nErrors by type: ${errorKinds.length === 0 ? 'none' : errorKinds.join('; ')}. Arrivals shed at the in-flight bound: ${recorder.shed}.`);
  console.log('\n| process | CPU (cores) | memory MiB, mean of first → second half | open files, likewise | restarts |');
  console.log('|---|---|---|---|---|');
  for (const process of growth) {
    const pair = ([first, last]: [number, number]) => `${first.toFixed(0)} → ${last.toFixed(0)}`;
    console.log(`| ${process.name}${process.kind === 'application' ? '' : ` (${process.kind})`} | ${process.cpu.toFixed(2)} | ${pair(process.memoryMiB)} | ${pair(process.openFiles)} | ${process.restarts} |`);
  }
  const kinds = ['kafka', 'temporal', 'postgres'].map((kind) => `${drained.backlogs.filter(({ name }) => name.startsWith(`${kind} `)).length} ${kind}`);
  const left = drained.backlogs.filter(({ waiting }) => waiting > 0);
  console.log(`\nAfter the load: ${drained.backlogs.length} backlogs read (${kinds.join(', ')}), ${left.length === 0 ? 'all at zero' : `${left.length} not at zero`} ${drained.seconds.toFixed(0)} s after it.`);
  console.log(`\nViolations: ${violations.length}`);
  for (const violation of violations) console.log(`  ${violation}`);
}

async function main(): Promise<number> {
  const settings = config();
  const owner = await createDbPool(settings.db.ownerUrl, { name: 'bench-platform', maxPoolSize: 4 });
  const temporal = await connectTemporal(settings.temporal, settings.temporalCodec);
  const admin = createKafka({ ...settings.kafka, clientId: 'bench-platform' }).admin();
  await admin.connect();
  try {
    const tenants = await benchTenants(values.url, owner, Number(values.tenants), 4);
    const tenantIds = tenants.map((tenant) => tenant.account.tenantId);
    const results = startResults('platform', {
      minutes: Number(values.minutes), tenants: tenants.length, rate: Number(values.rate), warmupSeconds: WARMUP_SECONDS, seed: Number(values.seed),
    }, values.results);
    const started = Date.now();
    const sampler = new ProcessSampler(started);
    const recorder = new Recorder(started);
    sampler.start();
    console.log(`${tenants.length} tenants, ${values.rate} requests a second for ${SECONDS} s against ${values.url} (warm-up ${WARMUP_SECONDS} s, ${MIX.length} kinds of request)`);
    const progress = setInterval(() => {
      const answered = [...recorder.families.values()].reduce((sum, family) => sum + family.latencies.length, 0);
      process.stderr.write(`${((Date.now() - started) / 1000).toFixed(0)} s: ${answered} answered, load average ${loadavg()[0].toFixed(2)}\n`);
    }, 30_000);
    await drive(httpCaller(values.url), tenants, recorder, { seconds: SECONDS, rate: Number(values.rate), maxInFlight: Number(values['max-in-flight']), random: seeded(Number(values.seed)) });
    clearInterval(progress);
    const loadEnded = (Date.now() - started) / 1000;
    console.log(`load ended after ${loadEnded.toFixed(0)} s; waiting for the platform to drain`);
    const drained = await waitDrained(async () => [...await consumerLags(admin), ...await taskQueueBacklogs(temporal.client), ...await databaseBacklogs(owner, tenantIds)]);
    const sampled = sampler.stop();
    const growth = growthOf(sampled, WARMUP_SECONDS, loadEnded);
    const judged = judgeGrowth(growth);
    const violations = [...judgeDrained(drained.backlogs), ...(SECONDS >= SOAK_MINUTES * 60 ? judged : judged.filter((line) => line.includes('restarted')))];
    const rows = familyRows(recorder, loadEnded);
    report(rows, recorder, growth, drained, violations);
    if (SECONDS < SOAK_MINUTES * 60) console.log(`(memory and open files are judged in runs of ${SOAK_MINUTES} minutes or more)`);
    const run = {
      families: rows, operations: Object.fromEntries(recorder.operations), shed: recorder.shed, minutes: recorder.byMinute(),
      processes: growth, samples: sampled.map(({ name, kind, readings }) => ({ name, kind, minutes: perMinute(readings) })), drained, violations,
    };
    results.write(run, platformTargets({ ...run, options: { minutes: Number(values.minutes) } }));
    return violations.length === 0 ? 0 : 1;
  } finally {
    await Promise.all([owner.end(), temporal.connection.close(), admin.disconnect()]);
  }
}

main().then((code) => { process.exitCode = code; }, (error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
