import { parseArgs } from 'node:util';
import argon2 from 'argon2';
import { ARGON2_OPTIONS, hashPassword } from '../common/identity/passwords';
import { newId } from '../common/ids';
import { apiClient, measure, printPhases, ratePerSecond as rate, startBenchGateway, type Phase } from './lib/load';

/**
 * Identity throughput (issue 3): logins per second against the Argon2id ceiling (verifications per
 * second with the same parameters and concurrency, measured in this run), and GET /auth/me and
 * POST /auth/refresh requests per second with p50/p99, beside the authenticated hello route as
 * the gateway's own baseline.
 *
 *   npm run bench:auth -- [--concurrency 8] [--seconds 5] [--max 20000]
 *
 * The gateway (api/server.ts from source) runs as a child process on an ephemeral loopback port
 * against the running services, so client and server do not share an event loop. Each phase runs
 * `concurrency` loops for at most `seconds` and at most `max` requests.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { concurrency: { type: 'string', default: '8' }, seconds: { type: 'string', default: '5' }, max: { type: 'string', default: '20000' } },
  });
  const concurrency = Number(values.concurrency);
  const seconds = Number(values.seconds);
  const max = Number(values.max);

  const { child, baseUrl } = await startBenchGateway();
  try {
    const call = apiClient(baseUrl);
    const request = async (method: string, path: string, body?: unknown, token?: string) =>
      await call(method, path, body, token) as Record<string, string>;

    // One account per loop, so sessions and refresh chains do not contend on one row.
    const password = 'bench-passphrase-of-some-length';
    const accounts = await Promise.all(Array.from({ length: concurrency }, () => request('POST', '/auth/register', {
      email: `bench.${newId()}@example.test`, password,
    })));
    const emails = accounts.map((account) => (account.user as unknown as { email: string }).email);
    const refreshTokens = accounts.map((account) => account.refreshToken);

    const hash = await hashPassword(password);
    const phases = [
      // The hashes run in this process (its libuv pool), the requests in the gateway's: each phase
      // reports the CPU its server process spent per operation.
      await measure('argon2id verify (ceiling)', concurrency, seconds, max, async () => { await argon2.verify(hash, password); }, process.pid),
      await measure('POST /auth/login', concurrency, seconds, max, async (worker) => {
        await request('POST', '/auth/login', { email: emails[worker], password });
      }, child.pid),
      await measure('GET /gateway/hello/secure (authenticated baseline)', concurrency, seconds, max, async (worker) => {
        await request('GET', '/gateway/hello/secure', undefined, accounts[worker].accessToken);
      }, child.pid),
      await measure('GET /auth/me', concurrency, seconds, max, async (worker) => {
        await request('GET', '/auth/me', undefined, accounts[worker].accessToken);
      }, child.pid),
      await measure('POST /auth/refresh', concurrency, seconds, max, async (worker) => {
        refreshTokens[worker] = (await request('POST', '/auth/refresh', { refreshToken: refreshTokens[worker] })).refreshToken;
      }, child.pid),
    ];

    console.log(`argon2id m=${ARGON2_OPTIONS.memoryCost} KiB t=${ARGON2_OPTIONS.timeCost} p=${ARGON2_OPTIONS.parallelism}; concurrency ${concurrency}; up to ${seconds} s or ${max} requests per phase`);
    printPhases(phases);
    const [ceiling, logins, hello, me] = phases;
    console.log(`logins / hash ceiling: ${((rate(logins) / rate(ceiling)) * 100).toFixed(0)} %`);
    console.log(`/auth/me / authenticated hello: ${((rate(me) / rate(hello)) * 100).toFixed(0)} %`);
    // Throughput ratios drift with whatever else runs on the machine; the CPU cost ratio does not.
    const cost = (phase: Phase) => phase.cpuMsPerRequest!;
    console.log(`by CPU per operation: logins / hash ceiling ${((cost(ceiling) / cost(logins)) * 100).toFixed(0)} %, /auth/me / hello ${((cost(hello) / cost(me)) * 100).toFixed(0)} %`);
  } finally {
    child.kill('SIGTERM');
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
