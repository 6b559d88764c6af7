import { parseArgs } from 'node:util';
import { config } from '../../common/config';
import { connectTemporal } from '../../common/temporal/client';
import { createDbPool } from '../../db/pool';
import { seeded } from '../lib/random';
import { checkInvariants } from './invariants';
import { Client, LoadRecord, runClient, setUpTenants, sleep, type Tenant } from './load';
import { bringBack, parseTargets, processesOf, runningProfile, TARGETS, type Target } from './targets';

/**
 * `npm run faults -- [--minutes 3] [--seed 1] [--cluster] [--clients 8] [--tenants 3] [--faults 4] [--targets gateway,worker,...]`
 *
 * Kills processes of the running platform with `kill -9` under a steady mixed load (bench/faults/load.ts),
 * restarts them as the first command does (`npm run up`, with the running profile), and then checks
 * that nothing was lost or doubled (bench/faults/invariants.ts). `--cluster` runs it on the cluster
 * profile, brought up first and the previous profile brought back after: a gateway's death is then
 * covered by the balancer, the others by Temporal's retries and the clients' own.
 *
 * The faults: one every `minutes / (faults + 1)`, its target drawn with the seed from `targets` (any
 * of gateway, worker, relay, audit-consumer, temporal, postgres, redis, kafka, s3, clamav; all by
 * default) and, in the cluster profile, one of the target's replicas; the platform is brought back
 * 5 s after each kill, while the load goes on. Traffic goes only to this machine; the run stops by
 * itself after `minutes` and the invariants' settle time (`--settle-seconds`, 120).
 *
 * The report gives the operations attempted and served, and per fault the requests that failed and
 * the seconds until every kind of request was served again; then the violations (the target is 0).
 * Exit 0 when there are none. test/integration/faults.int.test.ts runs a quick variant in `npm test`.
 */

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '3' },
    seed: { type: 'string', default: '1' },
    cluster: { type: 'boolean', default: false },
    clients: { type: 'string', default: '8' },
    tenants: { type: 'string', default: '3' },
    faults: { type: 'string', default: '4' },
    targets: { type: 'string', default: TARGETS.join(',') },
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
    'settle-seconds': { type: 'string', default: '120' },
  },
});
const SECONDS = Number(values.minutes) * 60;
const CLIENTS = Number(values.clients);
const TENANTS = Number(values.tenants);
const FAULTS = Number(values.faults);
const TARGET_LIST = parseTargets(values.targets);

const random = seeded(Number(values.seed));
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];

interface Fault { target: Target; process: string; killedAt: number; restartedAt?: number }

async function injectFaults(record: LoadRecord, faults: Fault[], restartFailures: string[]): Promise<void> {
  const every = SECONDS / (FAULTS + 1);
  for (let n = 1; n <= FAULTS; n += 1) {
    await sleep(Math.max(0, n * every - record.elapsed()) * 1000);
    const target = pick(TARGET_LIST);
    const candidates = processesOf(target);
    if (candidates.length === 0) continue;
    const victim = pick(candidates);
    const fault: Fault = { target, process: victim.name, killedAt: record.elapsed() };
    process.kill(victim.pid, 'SIGKILL');
    faults.push(fault);
    console.log(`${fault.killedAt.toFixed(1)} s: kill -9 ${victim.name} (pid ${victim.pid})`);
    await sleep(5000);
    try {
      await bringBack();
      fault.restartedAt = record.elapsed();
      console.log(`${fault.restartedAt.toFixed(1)} s: ${victim.name} restarted (npm run up)`);
    } catch (error) {
      const output = String((error as { stderr?: string }).stderr ?? error).trim().split('\n').slice(-15).join('\n');
      restartFailures.push(`npm run up after killing ${victim.name} failed:\n${output}`);
    }
  }
}

/**
 * How long after a kill requests failed: from the kill to the last failure of the run of failures that
 * began with it (failures less than 5 s apart), 0 when none failed.
 */
function outageAfter(record: LoadRecord, killedAt: number, until: number): number {
  const later = record.failures.filter((failure) => failure.at >= killedAt && failure.at < until).map((failure) => failure.at);
  if (later.length === 0) return 0;
  let last = later[0];
  for (const at of later) {
    if (at - last > 5) break;
    last = at;
  }
  return last - killedAt;
}

function report(record: LoadRecord, faults: readonly Fault[], violations: readonly string[]): void {
  console.log(`\nOperations (attempts / served): ${Object.entries(record.attempts).map(([op, n]) => `${op} ${n}/${record.successes[op as keyof typeof record.successes]}`).join(', ')}`);
  console.log('\n| fault | killed at | restarted at | failed requests | requests failing for |');
  console.log('|---|---|---|---|---|');
  for (const fault of faults) {
    const next = faults.find((other) => other.killedAt > fault.killedAt)?.killedAt ?? Infinity;
    const failed = record.failures.filter((failure) => failure.at >= fault.killedAt && failure.at < next);
    const kinds = [...new Set(failed.map((failure) => `${failure.operation} ${failure.reason}`))].slice(0, 6).join('; ');
    console.log(`| kill -9 ${fault.process} | ${fault.killedAt.toFixed(1)} s | ${fault.restartedAt?.toFixed(1) ?? '-'} s | ${failed.length}${kinds ? ` (${kinds})` : ''} | ${outageAfter(record, fault.killedAt, next).toFixed(1)} s |`);
  }
  console.log(`\nViolations: ${violations.length}`);
  for (const violation of violations) console.log(`  ${violation}`);
}

async function main(): Promise<number> {
  const previous = runningProfile();
  const profile = values.cluster ? 'cluster' : previous;
  if (profile !== previous) {
    console.log(`bringing up the ${profile} profile`);
    await bringBack(profile);
  }
  const settings = config();
  const [owner, temporal] = await Promise.all([
    createDbPool(settings.db.ownerUrl, { name: 'faults', maxPoolSize: 2 }), connectTemporal(settings.temporal, settings.temporalCodec),
  ]);
  try {
    const record = new LoadRecord();
    const client = new Client(values.url, record, SECONDS + 120);
    const tenants: Tenant[] = await setUpTenants(values.url, owner, TENANTS, Math.ceil(CLIENTS / TENANTS));
    console.log(`${profile} profile: ${TENANTS} tenants, ${CLIENTS} clients, ${SECONDS} s of load against ${values.url}; ${FAULTS} faults among ${TARGET_LIST.join(', ')} (seed ${values.seed})`);
    const faults: Fault[] = [];
    const restartFailures: string[] = [];
    const progress = setInterval(() => console.log(`${record.elapsed().toFixed(0)} s: ${Object.values(record.successes).reduce((a, b) => a + b, 0)} operations served, ${record.failures.length} failed attempts`), 15_000);
    await Promise.all([
      injectFaults(record, faults, restartFailures),
      ...Array.from({ length: CLIENTS }, (_, index) => {
        const tenant = tenants[index % tenants.length];
        return runClient(client, record, tenant, tenant.pairs[Math.floor(index / tenants.length) % tenant.pairs.length], SECONDS, random);
      }),
    ]);
    clearInterval(progress);
    console.log('load ended; checking the invariants');
    const invariants = await checkInvariants({ owner, client, temporal: temporal.client, record, settleMs: Number(values['settle-seconds']) * 1000 },
      tenants.map((tenant) => tenant.account.tenantId));
    const violations = [...restartFailures, ...invariants];
    report(record, faults, violations);
    return violations.length === 0 ? 0 : 1;
  } finally {
    await Promise.all([owner.end(), temporal.connection.close()]);
    if (profile !== previous) await bringBack(previous);
  }
}

main().then((code) => { process.exitCode = code; }, (error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
