import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { config } from '../common/config';
import { newId } from '../common/ids';
import { repoRoot } from '../common/paths';
import { createDbPool, sql } from '../db/pool';
import { checkLedger } from '../workers/money/ledger-check';
import { measure, percentile, printPhases, ratePerSecond as rate, startBenchGateway, type Phase } from './lib/load';

/**
 * Credit and debit throughput (issue 6): `concurrency` clients through the REST API (the gateway as a
 * child process: token, permission, rate limit, request audit, plan-limit cache, idempotency, the
 * money transaction), against the ceiling of the same SQL run by pgbench with the same number of
 * clients on the same database (bench/money/operation.pgbench.sql: the gateway's statements in the
 * same order, in one transaction, as platform_app under row-level security).
 *
 *   npm run bench:money -- [--concurrency 32] [--seconds 10] [--max 200000]
 *
 * Each client has a wallet of its own in one tenant and alternates credit and debit of 1, so the
 * phases measure the operation, not one wallet's lock. The ledger invariant is checked at the end.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      concurrency: { type: 'string', default: '32' }, seconds: { type: 'string', default: '10' }, max: { type: 'string', default: '200000' },
    },
  });
  const concurrency = Number(values.concurrency);
  const seconds = Number(values.seconds);
  const max = Number(values.max);
  const settings = config();
  const owner = await createDbPool(settings.db.ownerUrl, { maxPoolSize: 2, name: 'bench-money-owner' });
  const { child, baseUrl } = await startBenchGateway();
  try {
    const api = async (method: string, path: string, body: unknown, token?: string, key?: string) => {
      const response = await fetch(`${baseUrl}/v1${path}`, {
        method,
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(key ? { 'idempotency-key': key } : {}),
        },
        body: JSON.stringify(body),
      });
      const json = await response.json() as Record<string, any>;
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(json)}`);
      return json;
    };

    const account = await api('POST', '/auth/register', { email: `bench.${newId()}@example.test`, password: 'bench-passphrase-of-some-length' });
    const tenantId: string = account.tenant.id;
    const userId: string = account.user.id;
    const token: string = account.accessToken;
    await owner.query(sql.unsafe`UPDATE users SET email_verified = true WHERE id = ${userId}`);
    const wallets: string[] = [];
    // pgbench's client_id counts from 0; the wallets of REST worker i and pgbench client i are w<i>.
    for (let i = 0; i < concurrency; i += 1) {
      wallets.push((await api('POST', '/wallets', { userId, currency: 'USD', label: `w${i}` }, token)).id);
      await api('POST', `/wallets/${wallets[i]}/credit`, { amount: 1_000_000 }, token, newId());
    }

    const operation = async (worker: number, step: number) => {
      const kind = step % 2 === 0 ? 'credit' : 'debit';
      await api('POST', `/wallets/${wallets[worker]}/${kind}`, { amount: 1, currency: 'USD', reason: 'bench' }, token, newId());
    };
    const steps = new Array<number>(concurrency).fill(0);
    // Warm-up: connections, caches, JIT.
    await measure('warm-up', concurrency, 2, 2000, async (worker) => operation(worker, steps[worker]++));
    const rest = await measure('REST credit/debit (gateway)', concurrency, seconds, max, async (worker) => operation(worker, steps[worker]++));
    const ceiling = runPgbench({ concurrency, seconds, tenantId, userId, url: settings.db.url });

    const report = await checkLedger(owner, { tenantId });
    console.log(`${concurrency} concurrent clients, ${seconds} s per phase; ledger after the run: ${report.ok ? 'consistent' : report.violations.join('; ')}`);
    printPhases([ceiling, rest]);
    console.log(`REST / pgbench ceiling: ${((rate(rest) / rate(ceiling)) * 100).toFixed(0)} % (target 40 %)`);
  } finally {
    child.kill('SIGTERM');
    await owner.end();
  }
}

/** pgbench with the operation script (credit and debit, equal weights); latencies from its per-transaction log. */
function runPgbench(run: { concurrency: number; seconds: number; tenantId: string; userId: string; url: string }): Phase {
  const dir = mkdtempSync(join(tmpdir(), 'bench-money-'));
  try {
    const template = readFileSync(join(repoRoot, 'bench/money/operation.pgbench.sql'), 'utf8');
    const script = (kind: string, delta: string, event: string) => {
      const file = join(dir, `${kind}.sql`);
      writeFileSync(file, template.replaceAll('(DELTA)', delta).replaceAll('TYPE', kind).replaceAll('EVENT', event));
      return file;
    };
    const credit = script('credit', '(1)', 'money.wallet.credited');
    const debit = script('debit', '(-1)', 'money.wallet.debited');
    const result = spawnSync('/usr/bin/pgbench', [
      '-n', '-M', 'extended', '-c', String(run.concurrency), '-j', '2', '-T', String(run.seconds),
      '-f', `${credit}@1`, '-f', `${debit}@1`, '-D', `tenant=${run.tenantId}`, '-D', `user=${run.userId}`,
      '-l', '--log-prefix', join(dir, 'log'), run.url,
    ], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`pgbench failed (${result.status}): ${result.stderr}`);
    const latencies: number[] = [];
    for (const file of readdirSync(dir).filter((name) => name.startsWith('log'))) {
      for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
        const fields = line.split(' ');
        // client_id transaction_no time(µs) script_no time_epoch time_us
        if (fields.length >= 3 && fields[2] !== 'failed' && fields[2] !== 'skipped') latencies.push(Number(fields[2]) / 1000);
      }
    }
    latencies.sort((a, b) => a - b);
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(result.stdout);
    const seconds = tps ? latencies.length / Number(tps[1]) : run.seconds;
    return { name: 'pgbench, the same SQL (ceiling)', count: latencies.length, seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
