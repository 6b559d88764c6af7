import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { config } from '../../common/config';
import { repoRoot } from '../../common/paths';

/** One measured phase of a benchmark: how many steps succeeded, over how long, and their latencies. */
export interface Phase {
  name: string;
  count: number;
  seconds: number;
  p50: number;
  p99: number;
  /** The slowest step, where the phase's own latencies were kept (measure). */
  max?: number;
  /** CPU time the measured server process spent per request, when its pid was given. */
  cpuMsPerRequest?: number;
}

/** The `p`th percentile (0-100) of ascending latencies, by nearest rank; NaN of none. The benches' only one. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

export const ratePerSecond = (phase: Phase): number => phase.count / phase.seconds;

/**
 * CPU seconds (user + system) a process has used so far, from /proc. On a machine shared with other
 * work, throughput ratios drift with the neighbours' load; the server's CPU cost per request does not.
 */
export function cpuSecondsOf(pid: number): number {
  // This process's own, to the microsecond rather than the tick: a phase of cheap calls measured in process.
  if (pid === process.pid) {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
  }
  const { fields } = procStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  // utime and stime: fields 14 and 15, in ticks of 1/100 s.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The machine's CPU ticks so far (all cores, 1/100 s each), from the first line of /proc/stat. */
export function machineTicks(): { busy: number; total: number } {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const ticks = fields.map(Number);
  const total = ticks.reduce((sum, value) => sum + value, 0);
  return { busy: total - ticks[3] - ticks[4], total }; // idle and iowait are fields 4 and 5
}

/**
 * The pid the bring-up scripts recorded for `name` (`$PLATFORM_DATA/run/<name>.pid`: `temporal`,
 * `app/api-1`...), when that process still runs; undefined otherwise.
 */
export function recordedPid(name: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(config().dataDir, 'run', `${name}.pid`), 'utf8').trim());
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** The Temporal server's pid as the bring-up recorded it: the dev server, or the cluster profile's server. */
export function recordedTemporalPid(): number | undefined {
  return recordedPid('temporal') ?? recordedPid('temporal-server');
}

/**
 * CPU seconds used so far by every process named `command` (a server of many processes, such as
 * PostgreSQL's backends), with what their ended children used (a closed backend's time moves to the
 * postmaster's children fields), so the difference over a phase counts the whole server.
 */
export function cpuSecondsOfCommand(command: string): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    const { name, fields } = procStat(stat);
    // utime, stime, cutime, cstime: fields 14-17.
    if (name === command) ticks += fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0);
  }
  return ticks / 100;
}

/** A /proc/<pid>/stat line: the command name, and the fields after it (the first is field 3, the state). */
function procStat(stat: string): { name: string; fields: string[] } {
  const nameEnd = stat.lastIndexOf(')');
  return { name: stat.slice(stat.indexOf('(') + 1, nameEnd), fields: stat.slice(nameEnd + 2).split(' ') };
}

/**
 * `concurrency` loops calling `step` until the time or the count runs out; every step must succeed.
 * With `serverPid`, the phase also reports that process's CPU time per request.
 */
export async function measure(
  name: string, concurrency: number, seconds: number, max: number, step: (worker: number) => Promise<void>, serverPid?: number,
): Promise<Phase> {
  // Progress, on stderr beside the tables on stdout: which phase runs now (and since when, for a sampler).
  process.stderr.write(`measuring: ${name} (${concurrency} in flight)\n`);
  const cpuBefore = serverPid ? cpuSecondsOf(serverPid) : 0;
  const windowStart = process.hrtime.bigint() / 1000n;
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  let issued = 0;
  await Promise.all(Array.from({ length: concurrency }, async (_, worker) => {
    while (performance.now() < deadline && issued < max) {
      issued += 1;
      const t0 = performance.now();
      await step(worker);
      latencies.push(performance.now() - t0);
    }
  }));
  const phase = mergedPhase(name, [{ latencies, seconds: (performance.now() - started) / 1000 }]);
  if (serverPid) phase.cpuMsPerRequest = ((cpuSecondsOf(serverPid) - cpuBefore) * 1000) / Math.max(1, latencies.length);
  // A profiled child's samples carry this clock (CLOCK_MONOTONIC in µs), so the phase can be cut out of its profile.
  if (process.env.BENCH_CPU_PROFILE_DIR) process.stderr.write(`profile window: ${name} ${windowStart}..${process.hrtime.bigint() / 1000n} µs, ${phase.count} requests\n`);
  return phase;
}

/** What an open loop sent: arrivals started, arrivals shed at the in-flight bound, and the seconds it ran. */
export interface OpenLoopRun {
  sent: number;
  shed: number;
  seconds: number;
}

/**
 * Arrivals at `rate` per second for `seconds`, whatever the answers (an open loop, as users arrive; measure()
 * is the closed loop of callers waiting for their answers): `arrive(n)` is started for the n-th arrival,
 * on a clock checked every `tickMs`. At most `maxInFlight` arrivals are outstanding; past that bound an
 * arrival is shed (counted, not sent: an overload shows in the count instead of hiding in a slower rate)
 * or, with `whenFull: 'wait'`, sent once one is answered, the schedule catching up after. Waits for the
 * answers still due. `arrive` times its own work: what it measures (an answer, a delivery) is its own.
 */
export async function openLoop(
  options: { rate: number; seconds: number; maxInFlight?: number; whenFull?: 'shed' | 'wait'; tickMs?: number },
  arrive: (arrival: number) => Promise<void>,
): Promise<OpenLoopRun> {
  const { rate, seconds, maxInFlight = Infinity, whenFull = 'shed', tickMs = 5 } = options;
  const inFlight = new Set<Promise<void>>();
  const started = performance.now();
  let arrived = 0;
  let shed = 0;
  while (performance.now() - started < seconds * 1000) {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    for (; arrived < due; arrived += 1) {
      if (inFlight.size >= maxInFlight && whenFull === 'shed') {
        shed += 1;
        continue;
      }
      while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
      const arrival = arrive(arrived).finally(() => inFlight.delete(arrival));
      inFlight.add(arrival);
    }
    await new Promise((resolve) => setTimeout(resolve, tickMs));
  }
  const elapsed = (performance.now() - started) / 1000;
  await Promise.all(inFlight);
  return { sent: arrived - shed, shed, seconds: elapsed };
}

/** The phases as a Markdown table, as docs/performance/ reports them. */
export function printPhases(phases: readonly Phase[]): void {
  const cpu = phases.some((phase) => phase.cpuMsPerRequest !== undefined);
  console.log(`| phase | count | per second | p50 ms | p99 ms |${cpu ? ' server CPU ms/request |' : ''}`);
  console.log(`|---|---|---|---|---|${cpu ? '---|' : ''}`);
  for (const phase of phases) {
    const cost = cpu ? ` ${phase.cpuMsPerRequest?.toFixed(3) ?? '-'} |` : '';
    console.log(`| ${phase.name} | ${phase.count} | ${ratePerSecond(phase).toFixed(0)} | ${phase.p50.toFixed(1)} | ${phase.p99.toFixed(1)} |${cost}`);
  }
}

export interface ChildServer {
  child: ChildProcess;
  baseUrl: string;
}

/**
 * Runs a TypeScript server entry point (from source, through the swc register hook) as a child
 * process on an ephemeral loopback port, so client and server do not share an event loop. The
 * child must log a JSON line containing `listenMessage` and a `port` member. With
 * BENCH_CPU_PROFILE_DIR set, the child writes a V8 CPU profile there when it exits (Node refuses
 * --cpu-prof in NODE_OPTIONS): where a phase's server CPU goes, for Chrome DevTools or speedscope;
 * measure() then prints each phase's window in the profile's clock.
 */
export function startChildServer(entry: string, listenMessage: string, env: Record<string, string> = {}): Promise<ChildServer> {
  const profileDir = process.env.BENCH_CPU_PROFILE_DIR;
  const profiling = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, [...profiling, '-r', join(repoRoot, 'test/helpers/app-swc-register.cjs'), join(repoRoot, entry)], {
    cwd: repoRoot,
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // A bench that fails on its way must not leave its server behind holding the bench's ports.
  const killChild = () => child.kill();
  process.once('exit', killChild);
  child.once('exit', () => process.off('exit', killChild));
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      const line = buffered.split('\n').find((candidate) => candidate.includes(`"${listenMessage}"`));
      if (!line) return;
      child.stdout.off('data', onData);
      forwardErrorLines(child.stdout);
      const { port } = JSON.parse(line) as { port: number };
      resolve({ child, baseUrl: `http://127.0.0.1:${port}` });
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code} before listening`)));
  });
}

/**
 * The child's log lines of levels error and fatal (pino's 50 and 60) go to this process's stderr: a
 * request that failed in a bench is then found by its problem's trace id. The rest is read and dropped.
 */
function forwardErrorLines(log: Readable): void {
  createInterface({ input: log, crlfDelay: Infinity }).on('line', (line) => {
    if (line.includes('"level":50') || line.includes('"level":60')) process.stderr.write(`${line}\n`);
  });
}

/**
 * The gateway (api/server.ts, or `entry`: a gateway of a bench's own that logs the same line) as a
 * child process against the running services. The limiter still counts every request, but a load
 * from one address must not be refused.
 */
export async function startBenchGateway(env: Record<string, string> = {}, entry = 'api/server.ts'): Promise<ChildServer> {
  const gateway = await startChildServer(entry, 'gateway listening', {
    // As production runs (no response validation), on the local platform's development credentials and
    // keys, which NODE_ENV=production refuses (common/config/production.ts): staging, validation off. The
    // platform's pepper, so the accounts a bench seeded sign in again in its next run.
    NODE_ENV: 'staging', RESPONSE_VALIDATION: 'off', API_HOST: '127.0.0.1', API_PORT: '0', LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '100000000', RATE_LIMIT_ADMIN_PER_MINUTE: '100000000',
    // The platform's own gateway holds the EventService's port (50051) while a bench runs beside it.
    GRPC_PORT: '0',
    ...env,
  });
  await waitReady(gateway.baseUrl);
  return gateway;
}

async function waitReady(baseUrl: string): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt += 1) {
    if ((await fetch(`${baseUrl}/ready`).catch(() => null))?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('gateway not ready after 30 s');
}

/**
 * One request on node:http with kept-alive connections, answered with its status and body text.
 * Not fetch: the client shares the machine's two cores with the gateway it measures, and undici's
 * fetch spent about 1 CPU ms per login request here against 0.4 ms for node:http (loginload runs
 * side by side, 2026-11-21), CPU the ceiling phases, which make no requests, do not pay.
 */
export function httpCaller(baseUrl: string) {
  const { hostname, port } = new URL(baseUrl);
  // An idle connection is closed by the client before the gateway's keep-alive timeout (Node's 5 s)
  // would close it: reusing one the gateway was closing just then failed a request with "socket
  // hang up" (bench:files, after its phase 2 left the connections idle). Node's agent reads the
  // server's Keep-Alive hint only to shorten a timeout it already has, so it needs one.
  const agent = new http.Agent({ keepAlive: true, timeout: 4_000 });
  return (method: string, path: string, headers: http.OutgoingHttpHeaders, body?: string | Buffer): Promise<{ status: number; text: string }> => new Promise((resolve, reject) => {
    const request = http.request({ hostname, port, path, method, headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** A JSON call to the gateway's API that must succeed (httpCaller). */
export function apiClient(baseUrl: string) {
  const call = httpCaller(baseUrl);
  return async (method: string, path: string, body?: unknown, token?: string): Promise<Record<string, unknown>> => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = {
      ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    };
    const { status, text } = await call(method, `/v1${path}`, headers, payload);
    if (status < 200 || status >= 300) throw new Error(`${method} ${path} answered ${status}: ${text}`);
    return text === '' ? {} : JSON.parse(text) as Record<string, unknown>;
  };
}

/** Two sides measured in `rounds` alternating rounds, each side's phases in order. */
export async function alternate(rounds: number, sides: (suffix: string) => [() => Promise<Phase>, () => Promise<Phase>]): Promise<[Phase[], Phase[]]> {
  const first: Phase[] = [];
  const second: Phase[] = [];
  for (let round = 1; round <= rounds; round += 1) {
    const [a, b] = sides(rounds > 1 ? ` (${round}/${rounds})` : '');
    first.push(await a());
    second.push(await b());
  }
  return [first, second];
}

export function interleave(first: readonly Phase[], second: readonly Phase[]): Phase[] {
  return first.flatMap((phase, index) => [phase, second[index]]);
}

/** Slices of one phase as one (rounds alternating with another side): counts and durations added, percentiles over all their latencies. */
export function mergedPhase(name: string, slices: readonly { latencies: readonly number[]; seconds: number }[]): Phase {
  const latencies = slices.flatMap((slice) => slice.latencies).sort((a, b) => a - b);
  const seconds = slices.reduce((sum, slice) => sum + slice.seconds, 0);
  return { name, count: latencies.length, seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? NaN };
}

/** Requests per second over every round of a side. */
export function rateOf(phases: readonly Phase[]): number {
  return phases.reduce((sum, phase) => sum + phase.count, 0) / phases.reduce((sum, phase) => sum + phase.seconds, 0);
}

/** The server's CPU ms per request over every round of a side. */
export function cpuOf(phases: readonly Phase[]): number {
  const cpuMs = phases.reduce((sum, phase) => sum + phase.cpuMsPerRequest! * phase.count, 0);
  return cpuMs / Math.max(1, phases.reduce((sum, phase) => sum + phase.count, 0));
}

export function percent(part: number, whole: number): string {
  return `${((part / whole) * 100).toFixed(0)} %`;
}
