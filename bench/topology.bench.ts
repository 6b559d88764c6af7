import { credentials } from '@grpc/grpc-js';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { config } from '../common/config';
import { newId } from '../common/ids';
import { createKafka } from '../common/kafka';
import { repoRoot } from '../common/paths';
import { createDbPool, sql, type DatabasePool } from '../db/pool';
import { eventServiceClass } from '../services/events/event-service';
import { BENCH_LIST_QUERY } from './lib/data-list';
import { measureDelivery } from './lib/events-delivery';
import { apiClient, httpCaller, machineTicks, measure, ratePerSecond, type Phase } from './lib/load';
import { fundedWallet, moneyApi, verifiedAccount, type BenchAccount } from './lib/money';
import { startResults } from './lib/results';
import { topologyTargets } from './lib/topology-targets';

/**
 * The money, data, files and events loads on the running platform, once per profile, in one run
 * (docs/operations.md, Sizing; docs/architecture.md, Running past one machine):
 *
 *   npm run bench:topology -- [--profiles default,cluster] [--seconds 8] [--concurrency 16] [--uploads 40]
 *                             [--rate 200] [--tenants 10]
 *
 * Unlike the other benches, which start a gateway and a worker of their own beside their ceilings,
 * this one measures the platform as `npm run up` runs it: the default profile (one process of each
 * kind, Temporal's dev server) and the cluster profile (two of each behind HAProxy, the Temporal
 * server on PostgreSQL), each brought up by this script in turn, with the same clients at
 * http://127.0.0.1:8080 and 127.0.0.1:50051. The limits that would refuse one load generator's
 * hundreds of requests a second (per-IP and per-user rate limits, a tenant's money operations in
 * flight, holds per wallet) are raised for the run, and the profile that ran before is brought back
 * with its own settings at the end.
 *
 * Per phase: requests, rate, p50 and p99 latency, and how busy the machine's CPUs were. On one
 * machine of two cores the cluster profile's replicas share the cores the single processes had, so
 * the pair shows the price of the topology (a balancer hop, a real Temporal server writing to
 * PostgreSQL), not its gain: that comes from machines added (docs/architecture.md). The run is also
 * written to bench/results/topology.json (bench/lib/results.ts).
 */
const { values } = parseArgs({
  options: {
    profiles: { type: 'string', default: 'default,cluster' },
    seconds: { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '16' },
    uploads: { type: 'string', default: '40' },
    rate: { type: 'string', default: '200' },
    tenants: { type: 'string', default: '10' },
  },
});
const PROFILES = values.profiles.split(',');
const SECONDS = Number(values.seconds);
const CONCURRENCY = Number(values.concurrency);
const UPLOADS = Number(values.uploads);
const BASE_URL = 'http://127.0.0.1:8080';
const GRPC_ADDRESS = '127.0.0.1:50051';
const MAX = 1_000_000;

/** Limits a real deployment keeps, lifted so they measure the platform rather than refuse its one client. */
const BENCH_LIMITS = {
  RATE_LIMIT_PER_MINUTE: '100000000', RATE_LIMIT_ADMIN_PER_MINUTE: '100000000',
  MONEY_MAX_IN_FLIGHT_PER_TENANT: String(CONCURRENCY), MONEY_MAX_HOLDS_PER_WALLET: '1000000',
};

interface Row {
  phase: Phase;
  /** Share of the machine's CPU time that was busy during the phase. */
  busy: number;
}

/** The phase with the machine's busy share over it. */
async function busy(run: () => Promise<Phase>): Promise<Row> {
  const before = machineTicks();
  const phase = await run();
  const after = machineTicks();
  return { phase, busy: (after.busy - before.busy) / Math.max(1, after.total - before.total) };
}

const timed = (name: string, concurrency: number, step: (client: number) => Promise<void>) =>
  busy(() => measure(name, concurrency, SECONDS, MAX, step));

/**
 * Brings the platform up in `profile` with `env` added: the application processes are stopped first
 * so they start again with it (up.sh leaves a process of the current build alone), the servers stay.
 * Its progress goes to stderr as up.sh prints it.
 */
async function bringUp(profile: string, env: Record<string, string>): Promise<void> {
  process.stderr.write(`\n== bringing up the ${profile} profile\n`);
  await script('bash', ['-c', 'source scripts/infra/lib.sh && stop_all_bg'], {});
  await script('bash', ['scripts/infra/up.sh', ...(profile === 'cluster' ? ['--cluster'] : [])], env);
}

function script(command: string, args: string[], env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`))));
  });
}

/** Transfers between two wallets of each client (direction alternating), then holds on a third. */
async function moneyRows(account: BenchAccount): Promise<Row[]> {
  const api = moneyApi(BASE_URL);
  const pairs: [string, string][] = [];
  const holdWallets: string[] = [];
  for (let i = 0; i < CONCURRENCY; i += 1) {
    pairs.push([await fundedWallet(api, account, `a${i}`, 1_000_000), await fundedWallet(api, account, `b${i}`, 1_000_000)]);
    holdWallets.push(await fundedWallet(api, account, `h${i}`, 1_000_000));
  }
  const steps = new Array<number>(CONCURRENCY).fill(0);
  const transfer = async (client: number) => {
    const [from, to] = steps[client]++ % 2 === 0 ? pairs[client] : [...pairs[client]].reverse();
    await api('POST', '/transfers', { fromWalletId: from, toWalletId: to, amount: 1, currency: 'USD', reason: 'bench' }, account.token, newId());
  };
  const hold = async (client: number) => {
    await api('POST', `/wallets/${holdWallets[client]}/hold`, { amount: 1, currency: 'USD', ttl: '1h', reason: 'bench' }, account.token, newId());
  };
  await measure('warm-up', CONCURRENCY, 1, MAX, transfer);
  return [await timed('money: POST /transfers', CONCURRENCY, transfer), await timed('money: POST /wallets/:id/hold', CONCURRENCY, hold)];
}

/** crm's records in a tenant of their own: creating contacts, reading one by id, and the data bench's list. */
async function dataRows(account: BenchAccount): Promise<Row[]> {
  const call = apiClient(BASE_URL);
  await call('POST', '/modules/crm/install', undefined, account.token);
  const companies: string[] = [];
  for (let i = 0; i < 20; i += 1) {
    companies.push(String((await call('POST', '/data/crm/companies', { name: `Company ${i}`, country: 'NZ' }, account.token)).id));
  }
  const created: string[] = [];
  const lastNames = ['Smith', 'Jones', 'Garcia', 'Miller', 'Brown', 'Davis', 'Wilson', 'Moore'];
  const create = async () => {
    const n = created.length;
    const contact = await call('POST', '/data/crm/contacts', {
      firstName: 'Ada', lastName: lastNames[n % lastNames.length], email: `c${n}.${newId()}@example.com`, age: 20 + (n % 40), companyId: companies[n % companies.length],
    }, account.token);
    created.push(String(contact.id));
  };
  let next = 0;
  const byId = async () => { await call('GET', `/data/crm/contacts/${created[(next += 1) % created.length]}`, undefined, account.token); };
  const list = async () => { await call('GET', `/data/crm/contacts?${BENCH_LIST_QUERY}`, undefined, account.token); };
  return [
    await timed('data: POST /data/crm/contacts', CONCURRENCY, create),
    await timed('data: GET /data/crm/contacts/:id', CONCURRENCY, byId),
    await timed('data: GET /data/crm/contacts?… (3 filters, order, embed)', CONCURRENCY, list),
  ];
}

/**
 * Uploads of distinct 256×256 PNGs (about 200 KB of noise), each step from the upload until GET
 * /files/:id redirects to its bytes (it is available): the scan, the promotion and the thumbnails included. Four at a time,
 * as an application's users upload, not the whole concurrency: ClamAV scans one file per thread.
 */
async function filesRows(account: BenchAccount): Promise<Row[]> {
  const call = httpCaller(BASE_URL);
  const authorization = `Bearer ${account.token}`;
  const forms: Array<{ type: string; bytes: Buffer }> = [];
  for (let i = 0; i < UPLOADS; i += 1) {
    const png = await sharp(randomBytes(256 * 256 * 3), { raw: { width: 256, height: 256, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();
    const form = new FormData();
    form.append('bucket', 'assets');
    form.append('originalName', `image-${i}.png`);
    form.append('file', new Blob([png]), `image-${i}.png`);
    const encoded = new Response(form);
    forms.push({ type: encoded.headers.get('content-type')!, bytes: Buffer.from(await encoded.arrayBuffer()) });
  }
  const upload = async () => {
    const form = forms.pop()!;
    const uploaded = await call('POST', '/v1/files/upload', { authorization, 'content-type': form.type, 'content-length': form.bytes.length }, form.bytes);
    if (uploaded.status !== 201) throw new Error(`upload answered ${uploaded.status}: ${uploaded.text}`);
    const { id } = JSON.parse(uploaded.text) as { id: string };
    // A file waiting for its scan is 404 to the API (services/files/read.ts); an available one redirects to its bytes.
    for (let polls = 0; polls < 1200; polls += 1) {
      const { status, text } = await call('GET', `/v1/files/${id}`, { authorization });
      if (status === 302) return;
      if (status !== 404) throw new Error(`file ${id}: ${status} ${text}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`file ${id} not available after 60 s`);
  };
  return [await busy(() => measure('files: upload → available (200 KB PNG)', 4, 600, UPLOADS, upload))];
}

/**
 * REST publishing, then publish → Subscribe delivery through the EventService: `tenants` tenants with
 * crm installed each stream auth.user.created, produced at `rate` per second (bench/lib/events-delivery.ts).
 */
async function eventsRows(account: BenchAccount): Promise<Row[]> {
  const call = apiClient(BASE_URL);
  await call('POST', '/modules/crm/install', undefined, account.token);
  const publish = async () => {
    await call('POST', '/events/publish', { type: 'crm.contact.created', data: { id: newId(), firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.test' } }, account.token);
  };
  const published = await timed('events: POST /events/publish', CONCURRENCY, publish);
  const tokens = new Map<string, string>();
  for (let i = 0; i < Number(values.tenants); i += 1) {
    const subscriber = await call('POST', '/auth/register', { email: `bench.topology.${newId()}@example.test`, password: 'bench-passphrase-of-some-length' });
    await call('POST', '/modules/crm/install', undefined, String(subscriber.accessToken));
    tokens.set((subscriber.tenant as { id: string }).id, String(subscriber.accessToken));
  }
  const settings = config();
  const kafka = createKafka({ ...settings.kafka, clientId: 'bench-topology' });
  const EventService = eventServiceClass();
  const grpc = new EventService(GRPC_ADDRESS, credentials.createInsecure());
  try {
    const before = machineTicks();
    const run = await measureDelivery(kafka, grpc, tokens, 'crm', { rate: Number(values.rate), seconds: SECONDS, warmupSeconds: 2, type: 'auth.user.created' });
    const after = machineTicks();
    if (run.delivered < run.sent) throw new Error(`${run.sent - run.delivered} of ${run.sent} events were not delivered`);
    const delivered: Row = {
      phase: { name: `events: produced → Subscribe stream (${values.rate}/s, ${values.tenants} tenants)`, count: run.delivered, seconds: run.seconds, p50: run.p50, p99: run.p99 },
      busy: (after.busy - before.busy) / Math.max(1, after.total - before.total),
    };
    return [published, delivered];
  } finally {
    grpc.close();
  }
}

/**
 * A new tenant whose owner may move money, on the enterprise plan: the free plan's 1 000 records and
 * events a day would end the data and events phases within a second. Set before the tenant's first
 * request that reads its plan, so no gateway holds the free plan for it.
 */
async function benchTenant(owner: DatabasePool): Promise<BenchAccount> {
  const account = await verifiedAccount(moneyApi(BASE_URL), owner);
  await owner.query(sql.unsafe`UPDATE subscriptions SET plan_id = 'enterprise' WHERE tenant_id = ${account.tenantId}`);
  return account;
}

async function measureProfile(profile: string, owner: DatabasePool): Promise<Row[]> {
  await bringUp(profile, BENCH_LIMITS);
  process.stderr.write(`== measuring the ${profile} profile (load average ${loadavg().map((load) => load.toFixed(2)).join(' ')})\n`);
  return [
    ...await moneyRows(await benchTenant(owner)),
    ...await dataRows(await benchTenant(owner)),
    ...await filesRows(await benchTenant(owner)),
    ...await eventsRows(await benchTenant(owner)),
  ];
}

function printPairs(results: ReadonlyMap<string, Row[]>): void {
  const profiles = [...results.keys()];
  const header = profiles.flatMap((profile) => [`${profile} per s`, `${profile} p50 ms`, `${profile} p99 ms`, `${profile} CPU busy`]);
  console.log(`| phase | ${header.join(' | ')} |`);
  console.log(`|---|${header.map(() => '---').join('|')}|`);
  const rows = results.get(profiles[0])!;
  rows.forEach(({ phase }, index) => {
    const cells = profiles.flatMap((profile) => {
      const row = results.get(profile)![index];
      return [ratePerSecond(row.phase).toFixed(0), row.phase.p50.toFixed(1), row.phase.p99.toFixed(1), `${(row.busy * 100).toFixed(0)} %`];
    });
    console.log(`| ${phase.name} | ${cells.join(' | ')} |`);
  });
}

async function main(): Promise<void> {
  const settings = config();
  const before = readFileSync(join(settings.dataDir, 'run', 'profile'), 'utf8').trim();
  const owner = await createDbPool(settings.db.ownerUrl, { maxPoolSize: 2, name: 'bench-topology-owner' });
  const results = new Map<string, Row[]>();
  const run = startResults('topology', { ...values });
  try {
    for (const profile of PROFILES) results.set(profile, await measureProfile(profile, owner));
  } finally {
    await owner.end();
    // The platform as it was: its profile, its own limits.
    await bringUp(before, {});
  }
  const conditions = `${SECONDS} s per phase, ${CONCURRENCY} clients (uploads: 4); load average after: ${loadavg().map((load) => load.toFixed(2)).join(' ')}`;
  console.log(`\n${conditions}\n`);
  printPairs(results);
  const profiles = Object.fromEntries([...results].map(([profile, rows]) => [profile, rows.map(({ phase, busy: share }) => ({
    phase: phase.name, count: phase.count, seconds: phase.seconds, perSecond: ratePerSecond(phase), p50: phase.p50, p99: phase.p99, busy: share,
  }))]));
  run.write({ conditions, profiles }, topologyTargets(profiles));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
