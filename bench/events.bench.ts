import { credentials, Metadata } from '@grpc/grpc-js';
import { Partitioners } from 'kafkajs';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { config } from '../common/config';
import { newId } from '../common/ids';
import { createKafka, topicMessagesOf, type OutgoingRecord } from '../common/kafka';
import { unaryCall } from '../common/proto';
import { encodeEvent } from '../services/events/envelope';
import { eventServiceClass } from '../services/events/event-service';
import { topics } from '../services/events/topics';
import { measureDelivery, STREAMED_TYPES, type DeliveryRun } from './lib/events-delivery';
import { alternate, apiClient, cpuOf, cpuSecondsOf, interleave, measure, percent, printPhases, rateOf, startBenchGateway, type Phase } from './lib/load';
import { atLeast, below, startResults, type TargetResult } from './lib/results';

/**
 * The event bus's publishing (issue 18), side by side in one run on this machine, against the
 * broker's own ceiling with the same messages, concurrency and acknowledgement (acks -1):
 * 1. REST `POST /v1/events/publish`, one event per request, `--concurrency` clients, against a bare
 *    kafkajs producer sending the same envelopes one per send. Target: REST >= 50 % of it.
 * 2. gRPC `BatchPublish` of `--batch` events, `--batch-concurrency` calls at once, against the
 *    producer's batched ceiling (one sendBatch of the same records per call). Target: >= 60 %.
 * 3. Publish → delivered to a Subscribe stream: `--tenants` tenants each subscribed to the same topic,
 *    `--rate` events per second spread over them for `--delivery-seconds` after `--delivery-warmup-seconds`
 *    not counted (bench/lib/events-delivery.ts).
 *    Target: p99 under 100 ms at 1 000 events/s with 50 tenants. The streams' module is `feed`
 *    (`--stream-module`), which declares auth.user.created and its own feed.item.posted and ships no
 *    subscriber; with `crm` every event also makes the worker create a contact (crm's subscriber), the
 *    data event that follows and its audit record. The streamed type (`--stream-type`) is
 *    auth.user.created, which crm's group in the worker also handles for every tenant, or
 *    feed.item.posted on the data topic, which no platform group reads (the phase measures delivery alone).
 * Both sides of a phase alternate in `--rounds` rounds, so a change of load hits both alike, after
 * one unmeasured round of each. The gateway runs as a child process (billing off: a bench tenant's
 * plan would stop it at eventsPerDay); its CPU per request is reported.
 *
 *   npm run bench:events -- [--concurrency 32] [--seconds 6] [--batch 500] [--batch-concurrency 2] [--rounds 2]
 *     [--tenants 50] [--rate 1000] [--delivery-seconds 10] [--delivery-warmup-seconds 2] [--phases 1,2,3] [--stream-module feed|crm]
 *     [--stream-type auth.user.created|feed.item.posted] [--gateway-node-options='--cpu-prof --cpu-prof-dir=/tmp/prof'] (to profile the gateway)
 */
/** The bench gateway's EventService port: the platform's own gateway holds 50051. */
const BENCH_GRPC_PORT = 50151;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      concurrency: { type: 'string', default: '32' }, seconds: { type: 'string', default: '6' }, rounds: { type: 'string', default: '2' },
      batch: { type: 'string', default: '500' }, 'batch-concurrency': { type: 'string', default: '2' },
      'gateway-node-options': { type: 'string', default: '' },
      tenants: { type: 'string', default: '50' }, rate: { type: 'string', default: '1000' }, 'delivery-seconds': { type: 'string', default: '10' },
      'delivery-warmup-seconds': { type: 'string', default: '2' },
      phases: { type: 'string', default: '1,2,3' }, 'stream-module': { type: 'string', default: 'feed' },
      'stream-type': { type: 'string', default: 'auth.user.created' },
    },
  });
  const phases = new Set(values.phases.split(','));
  const concurrency = Number(values.concurrency);
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const batch = Number(values.batch);
  const batchConcurrency = Number(values['batch-concurrency']);
  const max = 1_000_000;

  const cfg = config();
  const results = startResults('events', values);
  const modulesDir = benchModules(cfg.modules.dir);
  const gateway = await startBenchGateway({
    BILLING_ENABLED: 'false', GRPC_PORT: String(BENCH_GRPC_PORT), NODE_OPTIONS: values['gateway-node-options'], MODULES_DIR: modulesDir,
  });
  const call = apiClient(gateway.baseUrl);
  const account = await call('POST', '/auth/register', { email: `bench.events.${newId()}@example.test`, password: 'bench-passphrase-of-some-length' });
  const token = String(account.accessToken);
  const tenantId = (account.tenant as { id: string }).id;
  await call('POST', '/modules/crm/install', undefined, token);

  const kafka = createKafka({ ...cfg.kafka, clientId: 'bench-events' });
  // Bare kafkajs, as the target names it: the gateway's own producer (common/fail-fast-producer.ts)
  // shares requests between concurrent publishes, which plain kafkajs does not.
  const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const EventService = eventServiceClass();
  const grpc = new EventService(`127.0.0.1:${BENCH_GRPC_PORT}`, credentials.createInsecure());
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);

  /** What both sides send: a crm.contact.created payload with a fresh id, as the publishing route builds it. */
  const payload = () => ({ id: newId(), firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.test' });
  const record = (): OutgoingRecord => {
    const data = payload();
    return encodeEvent({
      topic: topics.data.name, key: data.id, correlationId: null,
      envelope: { id: newId(), type: 'crm.contact.created', source: 'crm', tenantId, data, schemaVersion: '1.0.0', timestamp: new Date().toISOString(), traceId: null },
    });
  };
  const grpcItem = () => {
    const data = payload();
    return { key: data.id, event: { type: 'crm.contact.created', data: Buffer.from(JSON.stringify(data)) } };
  };

  const pid = gateway.child.pid!;
  const steps = {
    rest: async () => { await call('POST', '/events/publish', { type: 'crm.contact.created', data: payload() }, token); },
    bare: async () => { await producer.sendBatch({ acks: -1, topicMessages: topicMessagesOf([record()]) }); },
    grpcBatch: async () => {
      await unaryCall(grpc, 'BatchPublish', { topic: topics.data.name, items: Array.from({ length: batch }, grpcItem) }, metadata);
    },
    bareBatch: async () => { await producer.sendBatch({ acks: -1, topicMessages: topicMessagesOf(Array.from({ length: batch }, record)) }); },
  };
  try {
    console.log(`\nmachine load average before: ${loadavg().map((load) => load.toFixed(2)).join(' ')}`);
    for (const [name, step] of Object.entries(steps)) {
      await measure(`warm-up ${name}`, name.endsWith('atch') ? batchConcurrency : concurrency, 1, max, step);
    }

    const measured: Record<string, unknown> = {};
    const targets: TargetResult[] = [];
    const ratioTarget = (target: string, sides: [Phase[], Phase[]] | undefined, limit: number, eventsPerStep: number) => {
      const [ours, ceiling] = sides ? [rateOf(sides[0]) * eventsPerStep, rateOf(sides[1]) * eventsPerStep] : [NaN, NaN];
      targets.push(atLeast(target, ours / ceiling, limit, `${percent(ours, ceiling)} (${ours.toFixed(0)} / ${ceiling.toFixed(0)} events/s)`));
    };
    let single: [Phase[], Phase[]] | undefined;
    if (phases.has('1')) {
      heading(`1. one event per request, ${concurrency} clients: REST against the bare producer`);
      single = await alternate(rounds, (suffix) => [
        () => measure(`REST POST /events/publish${suffix}`, concurrency, seconds / rounds, max, steps.rest, pid),
        () => measure(`bare kafkajs producer, one per send${suffix}`, concurrency, seconds / rounds, max, steps.bare),
      ]);
      report(single, 'REST / bare producer', 50, 1, true);
      measured.single = { rest: single[0], bare: single[1] };
    }
    ratioTarget(`REST publish ≥ 50 % of a bare kafkajs producer (${concurrency} clients) (issue 18)`, single, 0.5, 1);
    let batched: [Phase[], Phase[]] | undefined;
    if (phases.has('2')) {
      heading(`2. batches of ${batch}, ${batchConcurrency} at once: gRPC BatchPublish against the producer's batched ceiling`);
      batched = await alternate(rounds, (suffix) => [
        () => measure(`gRPC BatchPublish x${batch}${suffix}`, batchConcurrency, seconds / rounds, max, steps.grpcBatch, pid),
        () => measure(`bare kafkajs sendBatch x${batch}${suffix}`, batchConcurrency, seconds / rounds, max, steps.bareBatch),
      ]);
      report(batched, 'gRPC BatchPublish / batched ceiling', 60, batch, true);
      measured.batched = { grpc: batched[0], bare: batched[1] };
    }
    ratioTarget(`BatchPublish of ${batch} ≥ 60 % of the producer's batched ceiling (issue 18)`, batched, 0.6, batch);
    const delivery = phases.has('3') ? await deliveryPhase() : undefined;
    measured.delivery = delivery;
    // The target names its load: 1 000 events/s over 50 tenants.
    const atTargetLoad = Number(values.rate) === 1000 && Number(values.tenants) === 50;
    targets.push(below(`publish → Subscribe p99 < 100 ms at 1 000 events/s, 50 tenants (issue 18)`, atTargetLoad && delivery ? delivery.p99 : NaN, 100,
      `${delivery?.p99.toFixed(1)} ms (${values['stream-type']})`));
    results.write(measured, targets);
  } finally {
    grpc.close();
    await producer.disconnect();
    await new Promise((resolve) => {
      gateway.child.once('exit', resolve);
      gateway.child.kill('SIGTERM');
    });
    rmSync(modulesDir, { recursive: true, force: true });
  }

  async function deliveryPhase(): Promise<DeliveryRun> {
    const module = values['stream-module'];
    const type = values['stream-type'];
    if (!STREAMED_TYPES[type]) throw new Error(`--stream-type is one of ${Object.keys(STREAMED_TYPES).join(', ')}`);
    heading(`3. publish → delivered to a Subscribe stream: ${values.tenants} tenants (module ${module}) on ${STREAMED_TYPES[type].topic}, ${type}, ${values.rate} events/s`);
    const tokens = await subscribers(call, Number(values.tenants), module);
    const gatewayCpu = cpuSecondsOf(pid);
    const run = await measureDelivery(kafka, grpc, tokens, module, {
      rate: Number(values.rate), seconds: Number(values['delivery-seconds']), warmupSeconds: Number(values['delivery-warmup-seconds']), type,
    });
    console.log(`| sent | delivered | events/s | p50 ms | p99 ms | max ms | gateway CPU ms/event |\n|---|---|---|---|---|---|---|`);
    console.log(`| ${run.sent} | ${run.delivered} | ${(run.sent / run.seconds).toFixed(0)} | ${run.p50.toFixed(1)} | ${run.p99.toFixed(1)} | ${run.max.toFixed(1)} | `
      + `${(((cpuSecondsOf(pid) - gatewayCpu) * 1000) / Math.max(1, run.sentWithWarmup)).toFixed(3)} |`);
    console.log(`\npublish → Subscribe p99 ${run.p99.toFixed(1)} ms (target < 100 ms at 1 000 events/s, 50 tenants)`);
    console.log(`\nmachine load average after: ${loadavg().map((load) => load.toFixed(2)).join(' ')}`);
    return run;
  }
}

/**
 * The bench gateway's modules: the shipped ones, and `feed`, which publishes feed.item.posted, subscribes
 * to it and to auth.user.created, and ships no subscriber code (the worker, which reads the shipped
 * modules only, runs nothing for it).
 */
function benchModules(shipped: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'bench-modules-'));
  for (const entry of readdirSync(shipped, { withFileTypes: true })) {
    if (entry.isDirectory()) cpSync(join(shipped, entry.name), join(dir, entry.name), { recursive: true });
  }
  mkdirSync(join(dir, 'feed'));
  writeFileSync(join(dir, 'feed', 'manifest.json'), JSON.stringify({
    slug: 'feed', name: 'Feed', version: '1.0.0', description: 'Bench: streams new users to its clients, with no subscriber of its own.',
    permissions: [], models: {}, hooks: [], events: { publishes: ['feed.item.posted'], subscribes: ['auth.user.created', 'feed.item.posted'] },
  }));
  return dir;
}

/** Tenants with `module` installed (it subscribes to auth.user.created) and their owners' tokens, by tenant id; four registrations at a time. */
async function subscribers(call: ReturnType<typeof apiClient>, count: number, module: string): Promise<Map<string, string>> {
  const tokens = new Map<string, string>();
  while (tokens.size < count) {
    const batch = Array.from({ length: Math.min(4, count - tokens.size) }, async () => {
      const account = await call('POST', '/auth/register', { email: `bench.events.sub.${newId()}@example.test`, password: 'bench-passphrase-of-some-length' });
      await call('POST', `/modules/${module}/install`, undefined, String(account.accessToken));
      return [(account.tenant as { id: string }).id, String(account.accessToken)] as const;
    });
    for (const [tenantId, token] of await Promise.all(batch)) tokens.set(tenantId, token);
  }
  return tokens;
}

function heading(text: string): void {
  console.log(`\n## ${text}`);
}

/** Both sides' rounds, then ours against the ceiling in events per second, beside the target. */
function report([ours, ceiling]: [Phase[], Phase[]], label: string, targetPercent: number, eventsPerStep: number, withCpu: boolean): void {
  printPhases(interleave(ours, ceiling));
  const [oursRate, ceilingRate] = [rateOf(ours) * eventsPerStep, rateOf(ceiling) * eventsPerStep];
  console.log(`\n${label}: ${oursRate.toFixed(0)} / ${ceilingRate.toFixed(0)} events/s = **${percent(oursRate, ceilingRate)}** (target >= ${targetPercent} %)`
    + (withCpu ? `; gateway CPU ${cpuOf(ours).toFixed(3)} ms per call` : ''));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
