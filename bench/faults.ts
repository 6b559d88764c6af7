import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { z } from 'zod';
import { config } from '../common/config';
import { newId } from '../common/ids';
import { createDbPool, sql, type DatabasePool } from '../db/pool';
import { recordedPid } from './lib/load';
import { fundedWallet, moneyApi, verifiedAccount, type BenchAccount } from './lib/money';

/**
 * `npm run faults -- [--seconds 180] [--seed 1] [--clients 8] [--tenants 3] [--targets gateway,worker,relay,temporal]`
 *
 * Kills processes of the running platform with `kill -9` under a steady mixed load, restarts them as
 * the first command does (`npm run up`, with the running profile), and then checks that nothing was
 * lost or doubled. Run it on the cluster profile (`npm run up -- --cluster`): a gateway's death is
 * then covered by the balancer, the others by Temporal's retries and the clients' own.
 *
 * The load: `clients` well-behaved clients over `tenants` tenants, each loop one of balance reads,
 * transfers, holds (some confirmed, some left to expire) and uploads. A money request that fails
 * (no answer, 5xx, 429) is sent again with the same Idempotency-Key and body after a backoff, or the
 * Retry-After it was given, until it has an answer; an upload carries no key, so a failed one is
 * counted, not repeated.
 *
 * The faults: one every `seconds / (faults + 1)`, its target drawn from `targets` with the seed;
 * the platform is restarted 5 s after each kill, and the load goes on throughout.
 *
 * The invariants, checked once the load has stopped and the platform answers again:
 *   - every money key has the answer it was first given when it is sent again (same transaction);
 *   - no key moved a wallet twice (one row per key and wallet in money_transactions);
 *   - `ledger:verify` and `audit:verify` pass for every tenant of the run;
 *   - every file the run uploaded ends in one final state (available or rejected), and nothing of the
 *     run's tenants is left in staging.
 * The report gives, per kind of fault, the requests that failed and the seconds until every kind of
 * request was served again.
 */

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '180' },
    seed: { type: 'string', default: '1' },
    clients: { type: 'string', default: '8' },
    tenants: { type: 'string', default: '3' },
    faults: { type: 'string', default: '4' },
    targets: { type: 'string', default: 'gateway,worker,relay,temporal' },
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
  },
});
const SECONDS = Number(values.seconds);
const CLIENTS = Number(values.clients);
const TENANTS = Number(values.tenants);
const FAULTS = Number(values.faults);
const TARGETS = values.targets.split(',') as Target[];
const BASE_URL = values.url;
const REPO = join(__dirname, '..');
const RUN_DIR = join(config().dataDir, 'run');

type Target = 'gateway' | 'worker' | 'relay' | 'temporal';
type Operation = 'read' | 'transfer' | 'hold' | 'confirm' | 'upload';

/** A seeded generator (mulberry32), so a run's schedule of faults and operations can be repeated. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = seeded(Number(values.seed));
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const run = promisify(execFile);

interface Failure { at: number; operation: Operation; reason: string }
interface Fault { target: Target; process: string; killedAt: number; restartedAt?: number }

const failures: Failure[] = [];
const faults: Fault[] = [];
const restartFailures: string[] = [];
const attempts: Record<Operation, number> = { read: 0, transfer: 0, hold: 0, confirm: 0, upload: 0 };
const successes: Record<Operation, number> = { read: 0, transfer: 0, hold: 0, confirm: 0, upload: 0 };
/** Every money request that got its answer: sent again at the end, it must get the same one. */
const answered: { tenant: Tenant; path: string; body: unknown; key: string; transactionId: string }[] = [];
const uploads: { tenantId: string; fileId: string }[] = [];
const started = Date.now();
const elapsed = () => (Date.now() - started) / 1000;

interface Tenant { account: BenchAccount; pairs: [string, string][]; holdWallet: string; heldIds: string[] }

interface Answer { status: number; retryAfter: number; body: unknown }

/**
 * One request as the clients send it. What answers may be the balancer's own page (an HTML 503 while no
 * gateway is up), so a body that is not JSON is kept as text, and only a request that got no answer
 * at all rejects, with the network's reason.
 */
async function call(method: string, path: string, body: unknown, token: string, key?: string): Promise<Answer> {
  const response = await fetch(`${BASE_URL}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(key ? { 'idempotency-key': key } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch((error: Error) => {
    const cause = error.cause as NodeJS.ErrnoException | undefined;
    throw new Error(cause?.code ?? cause?.message ?? error.message);
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch { /* the balancer's HTML page, kept as text */ }
  return { status: response.status, retryAfter: Number(response.headers.get('retry-after')), body: parsed };
}

/** The transaction a money answer names: its id, or the job's result when it answered 202. */
async function transactionOf(answer: Answer, token: string): Promise<string | undefined> {
  const body = answer.body as { id?: string; jobId?: string };
  if (answer.status === 200 || answer.status === 201) return body.id;
  if (answer.status !== 202 || !body.jobId) return undefined;
  for (let waited = 0; waited < 120_000; waited += 500) {
    const job = await call('GET', `/jobs/${body.jobId}`, undefined, token).catch(() => undefined);
    const state = job?.body as { status?: string; result?: { id?: string } } | undefined;
    if (state?.status === 'completed') return state.result?.id;
    if (state?.status === 'failed' || state?.status === 'canceled') return undefined;
    await sleep(500);
  }
  return undefined;
}

/**
 * A money request as a well-behaved client sends it: the same key and body until an answer that is
 * not a failure of the platform, backing off (or waiting the Retry-After given) in between.
 */
async function money(operation: Operation, tenant: Tenant, path: string, body: unknown): Promise<string | undefined> {
  const key = newId();
  const { token } = tenant.account;
  for (let attempt = 0; elapsed() < SECONDS + 120; attempt += 1) {
    attempts[operation] += 1;
    let answer: Answer | undefined;
    let reason: string;
    try {
      answer = await call('POST', path, body, token, key);
      reason = `${answer.status}`;
    } catch (error) {
      reason = (error as Error).message;
    }
    if (answer && answer.status < 500 && answer.status !== 429) {
      const transactionId = await transactionOf(answer, token);
      if (transactionId) {
        successes[operation] += 1;
        answered.push({ tenant, path, body, key, transactionId });
        return transactionId;
      }
      if (answer.status !== 202) return undefined; // a business refusal (422 insufficient funds...) is an answer
      reason = 'job unfinished';
    }
    failures.push({ at: elapsed(), operation, reason });
    const retryAfter = answer?.retryAfter ?? NaN;
    await sleep(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : Math.min(4000, 100 * 2 ** attempt));
  }
  return undefined;
}

async function read(tenant: Tenant): Promise<void> {
  attempts.read += 1;
  try {
    const answer = await call('GET', `/wallets/${tenant.pairs[0][0]}/balance`, undefined, tenant.account.token);
    if (answer.status === 200) successes.read += 1;
    else failures.push({ at: elapsed(), operation: 'read', reason: `${answer.status}` });
  } catch (error) {
    failures.push({ at: elapsed(), operation: 'read', reason: (error as Error).message });
  }
}

async function upload(tenant: Tenant): Promise<void> {
  attempts.upload += 1;
  const form = new FormData();
  form.append('bucket', 'documents');
  form.append('originalName', 'note.txt');
  form.append('file', new Blob([`faults run ${newId()}\n`], { type: 'text/plain' }), 'note.txt');
  try {
    const response = await fetch(`${BASE_URL}/v1/files/upload`, {
      method: 'POST', body: form, headers: { authorization: `Bearer ${tenant.account.token}` },
    });
    const body = await response.json() as { id?: string };
    if (response.status === 201 && body.id) {
      successes.upload += 1;
      uploads.push({ tenantId: tenant.account.tenantId, fileId: body.id });
    } else failures.push({ at: elapsed(), operation: 'upload', reason: `${response.status}` });
  } catch (error) {
    failures.push({ at: elapsed(), operation: 'upload', reason: (error as Error).cause ? String((error as Error).cause) : String(error) });
  }
}

async function client(index: number, tenants: readonly Tenant[]): Promise<void> {
  const tenant = tenants[index % tenants.length];
  const pair = tenant.pairs[index % tenant.pairs.length];
  let step = 0;
  while (elapsed() < SECONDS) {
    const roll = random();
    step += 1;
    const [from, to] = step % 2 === 0 ? pair : [pair[1], pair[0]];
    if (roll < 0.4) await read(tenant);
    else if (roll < 0.7) await money('transfer', tenant, '/transfers', { fromWalletId: from, toWalletId: to, amount: 1, currency: 'USD', reason: 'faults' });
    else if (roll < 0.85) {
      // Half the holds are confirmed later; the others expire by their own timer during the run.
      const confirmLater = random() < 0.5;
      const id = await money('hold', tenant, `/wallets/${tenant.holdWallet}/hold`, { amount: 1, currency: 'USD', ttl: confirmLater ? '1h' : '20s', reason: 'faults' });
      if (id && confirmLater) tenant.heldIds.push(id);
    } else if (roll < 0.9 && tenant.heldIds.length > 0) {
      await money('confirm', tenant, `/holds/${tenant.heldIds.shift()!}/confirm`, {});
    } else await upload(tenant);
  }
}

/** The processes a target names, as the bring-up recorded them (its pidfiles). */
function processesOf(target: Target): string[] {
  const names: Record<Target, string[]> = {
    gateway: ['app/api-1', 'app/api-2', 'app/api'], worker: ['app/worker-1', 'app/worker-2', 'app/worker'],
    relay: ['app/relay-1', 'app/relay-2', 'app/relay'], temporal: ['temporal-server', 'temporal'],
  };
  return names[target].filter((name) => recordedPid(name) !== undefined);
}


/**
 * How long after a kill requests failed: from the kill to the last failure of the run of failures that
 * began with it (failures less than 5 s apart), 0 when none failed.
 */
function outageAfter(killedAt: number, until: number): number {
  const later = failures.filter((failure) => failure.at >= killedAt && failure.at < until).map((failure) => failure.at);
  if (later.length === 0) return 0;
  let last = later[0];
  for (const at of later) {
    if (at - last > 5) break;
    last = at;
  }
  return last - killedAt;
}

async function injectFaults(): Promise<void> {
  const every = SECONDS / (FAULTS + 1);
  for (let n = 1; n <= FAULTS; n += 1) {
    await sleep(Math.max(0, n * every - elapsed()) * 1000);
    const target = pick(TARGETS);
    const candidates = processesOf(target);
    if (candidates.length === 0) continue;
    const name = pick(candidates);
    const fault: Fault = { target, process: name, killedAt: elapsed() };
    process.kill(recordedPid(name)!, 'SIGKILL');
    faults.push(fault);
    console.log(`${fault.killedAt.toFixed(1)} s: kill -9 ${name}`);
    await sleep(5000);
    const profile = readFileSync(join(RUN_DIR, 'profile'), 'utf8').trim();
    try {
      await run('bash', [join(REPO, 'scripts/infra/up.sh'), ...(profile === 'cluster' ? ['--cluster'] : [])], { cwd: REPO, maxBuffer: 1 << 26 });
      fault.restartedAt = elapsed();
      console.log(`${fault.restartedAt.toFixed(1)} s: ${name} restarted (npm run up)`);
    } catch (error) {
      const output = String((error as { stderr?: string }).stderr ?? error).trim().split('\n').slice(-15).join('\n');
      restartFailures.push(`npm run up after killing ${name} failed:\n${output}`);
    }
  }
}

async function setUp(owner: DatabasePool): Promise<Tenant[]> {
  const api = moneyApi(BASE_URL);
  const tenants: Tenant[] = [];
  for (let t = 0; t < TENANTS; t += 1) {
    const account = await verifiedAccount(api, owner);
    const pairs: [string, string][] = [];
    for (let c = 0; c < Math.ceil(CLIENTS / TENANTS); c += 1) {
      pairs.push([await fundedWallet(api, account, `a${c}`, 1_000_000), await fundedWallet(api, account, `b${c}`, 1_000_000)]);
    }
    tenants.push({ account, pairs, holdWallet: await fundedWallet(api, account, 'holds', 1_000_000), heldIds: [] });
  }
  return tenants;
}

/** Waits until every upload of the run has its final state; the files still waiting are violations. */
async function unsettledFiles(owner: DatabasePool, deadlineMs: number): Promise<string[]> {
  const ids = uploads.map((upload) => upload.fileId);
  for (const end = Date.now() + deadlineMs; ;) {
    const waiting = await owner.anyFirst(sql.type(z.object({ id: z.string() }))`
      SELECT id FROM files WHERE id = ANY(${sql.array(ids, 'uuid')}) AND status NOT IN ('available', 'rejected')`);
    if (waiting.length === 0 || Date.now() > end) return waiting.map(String);
    await sleep(2000);
  }
}

async function checkInvariants(owner: DatabasePool, tenants: readonly Tenant[]): Promise<string[]> {
  const violations: string[] = [];
  // Sixteen at a time: a key whose workflow was cached by a killed worker waits for the sticky queue's
  // timeout before another worker takes its task, and answers 202 with its job past the gateway's deadline.
  const queue = [...answered];
  await Promise.all(Array.from({ length: 16 }, async () => {
    for (let request = queue.shift(); request; request = queue.shift()) {
      const again = await call('POST', request.path, request.body, request.tenant.account.token, request.key);
      const transactionId = await transactionOf(again, request.tenant.account.token);
      if (transactionId !== request.transactionId) {
        violations.push(`key ${request.key} (${request.path}) answered ${transactionId ?? again.status} again, first ${request.transactionId}`);
      }
    }
  }));
  const tenantIds = tenants.map((tenant) => tenant.account.tenantId);
  const doubled = await owner.any(sql.type(z.object({ key: z.string(), walletId: z.string(), rows: z.number() }))`
    SELECT idempotency_key AS key, wallet_id AS "walletId", count(*)::int AS rows FROM money_transactions
    WHERE tenant_id = ANY(${sql.array(tenantIds, 'uuid')}) AND idempotency_key IS NOT NULL
    GROUP BY 1, 2 HAVING count(*) > 1`);
  for (const row of doubled) violations.push(`key ${row.key} moved wallet ${row.walletId} ${row.rows} times`);
  for (const tenantId of tenantIds) {
    for (const check of ['ledger:verify', 'audit:verify']) {
      try {
        execFileSync('npm', ['run', '-s', check, '--', '--tenant', tenantId], { cwd: REPO, stdio: 'pipe' });
      } catch (error) {
        violations.push(`${check} of ${tenantId}: ${String((error as { stdout?: Buffer }).stdout ?? error).slice(0, 500)}`);
      }
    }
  }
  for (const id of await unsettledFiles(owner, 120_000)) violations.push(`file ${id} has no final state`);
  const staged = await owner.oneFirst(sql.type(z.object({ count: z.number() }))`
    SELECT count(*)::int FROM files WHERE tenant_id = ANY(${sql.array(tenantIds, 'uuid')}) AND status = 'pending_scan'`);
  if (staged > 0) violations.push(`${staged} files of the run still in staging`);
  return violations;
}

function report(violations: readonly string[]): void {
  console.log(`\nOperations (attempts / succeeded): ${Object.entries(attempts).map(([op, n]) => `${op} ${n}/${successes[op as Operation]}`).join(', ')}`);
  console.log('\n| fault | killed at | restarted at | failed requests | requests failing for |');
  console.log('|---|---|---|---|---|');
  for (const fault of faults) {
    const next = faults.find((other) => other.killedAt > fault.killedAt)?.killedAt ?? Infinity;
    const served = outageAfter(fault.killedAt, next);
    const failed = failures.filter((failure) => failure.at >= fault.killedAt && failure.at < next);
    const kinds = [...new Set(failed.map((failure) => `${failure.operation} ${failure.reason}`))].slice(0, 6).join('; ');
    console.log(`| kill -9 ${fault.process} | ${fault.killedAt.toFixed(1)} s | ${fault.restartedAt?.toFixed(1) ?? '-'} s | ${failed.length}${kinds ? ` (${kinds})` : ''} | ${served.toFixed(1)} s |`);
  }
  console.log(`\nViolations: ${violations.length}`);
  for (const violation of violations) console.log(`  ${violation}`);
}

async function main(): Promise<void> {
  const owner = await createDbPool(config().db.ownerUrl, { name: 'faults', maxPoolSize: 2 });
  try {
    const tenants = await setUp(owner);
    console.log(`${TENANTS} tenants, ${CLIENTS} clients, ${SECONDS} s of load against ${BASE_URL}; ${FAULTS} faults among ${TARGETS.join(', ')} (seed ${values.seed})`);
    const progress = setInterval(() => console.log(`${elapsed().toFixed(0)} s: ${Object.values(successes).reduce((a, b) => a + b, 0)} operations served, ${failures.length} failed attempts`), 15_000);
    await Promise.all([injectFaults(), ...Array.from({ length: CLIENTS }, (_, index) => client(index, tenants))]);
    clearInterval(progress);
    console.log('load ended; checking the invariants');
    const violations = [...restartFailures, ...await checkInvariants(owner, tenants)];
    report(violations);
    process.exitCode = violations.length === 0 ? 0 : 1;
  } finally {
    await owner.end();
  }
}

void main();
