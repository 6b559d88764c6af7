import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import argon2 from 'argon2';
import { ARGON2_OPTIONS, hashPassword } from '../common/identity/passwords';
import { newId } from '../common/ids';
import { repoRoot } from '../common/paths';

/**
 * Identity throughput (issue 3): logins per second against the Argon2id ceiling (verifications per
 * second with the same parameters and concurrency, measured in this run), and GET /auth/me and
 * POST /auth/refresh requests per second with p50/p99, beside the public hello route as the
 * gateway's own baseline.
 *
 *   npm run bench:auth -- [--concurrency 8] [--seconds 5] [--max 20000]
 *
 * The gateway (api/server.ts from source) runs as a child process on an ephemeral loopback port
 * against the running services, so client and server do not share an event loop. Each phase runs
 * `concurrency` loops for at most `seconds` and at most `max` requests.
 */
interface Phase {
  name: string;
  count: number;
  seconds: number;
  p50: number;
  p99: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

/** `concurrency` loops calling `step` until the time or the count runs out; every step must succeed. */
async function measure(name: string, concurrency: number, seconds: number, max: number, step: (worker: number) => Promise<void>): Promise<Phase> {
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
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { name, count: latencies.length, seconds: elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

function startGateway(): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = spawn(process.execPath, ['-r', join(repoRoot, 'test/helpers/app-swc-register.cjs'), join(repoRoot, 'api/server.ts')], {
    cwd: repoRoot,
    // The limiter still counts every request, but a load from one address must not be refused.
    env: {
      ...process.env, NODE_OPTIONS: '', NODE_ENV: 'production', API_HOST: '127.0.0.1', API_PORT: '0', LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '100000000', RATE_LIMIT_ADMIN_PER_MINUTE: '100000000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      const line = buffered.split('\n').find((candidate) => candidate.includes('"gateway listening"'));
      if (!line) return;
      child.stdout!.off('data', onData);
      child.stdout!.resume(); // the request log is not read, only drained
      resolve({ child, baseUrl: `http://127.0.0.1:${JSON.parse(line).port}` });
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code} before listening`)));
  });
}

async function waitReady(baseUrl: string): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt += 1) {
    if ((await fetch(`${baseUrl}/ready`).catch(() => null))?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('gateway not ready after 30 s');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { concurrency: { type: 'string', default: '8' }, seconds: { type: 'string', default: '5' }, max: { type: 'string', default: '20000' } },
  });
  const concurrency = Number(values.concurrency);
  const seconds = Number(values.seconds);
  const max = Number(values.max);

  const { child, baseUrl } = await startGateway();
  try {
    await waitReady(baseUrl);
    const request = async (method: string, path: string, body?: unknown, token?: string) => {
      const response = await fetch(`${baseUrl}/v1${path}`, {
        method,
        headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = await response.json() as Record<string, string>;
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(json)}`);
      return json;
    };

    // One account per loop, so sessions and refresh chains do not contend on one row.
    const password = 'bench-passphrase-of-some-length';
    const accounts = await Promise.all(Array.from({ length: concurrency }, () => request('POST', '/auth/register', {
      email: `bench.${newId()}@example.test`, password,
    })));
    const emails = accounts.map((account) => (account.user as unknown as { email: string }).email);
    const refreshTokens = accounts.map((account) => account.refreshToken);

    const hash = await hashPassword(password);
    const phases = [
      await measure('argon2id verify (ceiling)', concurrency, seconds, max, async () => { await argon2.verify(hash, password); }),
      await measure('POST /auth/login', concurrency, seconds, max, async (worker) => {
        await request('POST', '/auth/login', { email: emails[worker], password });
      }),
      await measure('GET /gateway/hello (public baseline)', concurrency, seconds, max, async () => { await request('GET', '/gateway/hello'); }),
      await measure('GET /auth/me', concurrency, seconds, max, async (worker) => { await request('GET', '/auth/me', undefined, accounts[worker].accessToken); }),
      await measure('POST /auth/refresh', concurrency, seconds, max, async (worker) => {
        refreshTokens[worker] = (await request('POST', '/auth/refresh', { refreshToken: refreshTokens[worker] })).refreshToken;
      }),
    ];

    const rate = (phase: Phase) => phase.count / phase.seconds;
    console.log(`argon2id m=${ARGON2_OPTIONS.memoryCost} KiB t=${ARGON2_OPTIONS.timeCost} p=${ARGON2_OPTIONS.parallelism}; concurrency ${concurrency}; up to ${seconds} s or ${max} requests per phase`);
    console.log('| phase | count | per second | p50 ms | p99 ms |');
    console.log('|---|---|---|---|---|');
    for (const phase of phases) {
      console.log(`| ${phase.name} | ${phase.count} | ${rate(phase).toFixed(0)} | ${phase.p50.toFixed(1)} | ${phase.p99.toFixed(1)} |`);
    }
    const [ceiling, logins, hello, me] = phases;
    console.log(`logins / hash ceiling: ${((rate(logins) / rate(ceiling)) * 100).toFixed(0)} %`);
    console.log(`/auth/me / hello: ${((rate(me) / rate(hello)) * 100).toFixed(0)} %`);
  } finally {
    child.kill('SIGTERM');
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
