import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../common/paths';
import { sql } from '../db/pool';
import { createAuditDatabase } from '../test/helpers/audit';
import { onDatabase } from '../test/helpers/db';
import { GOOD_PASSWORD, uniqueEmail } from '../test/helpers/identity';
import { below, startResults } from './lib/results';

/**
 * Audit export with bounded memory (issue 7: 1 million rows, peak memory under 200 MB).
 *
 *   npm run bench:audit-export -- [--rows 1000000] [--format json|csv] [--gateway-node-options='--max-semi-space-size=4' (the default, as the gateway runs)]
 *                                 [--client-mibps 5]
 *
 * Starts the real gateway (compiled, from dist/) as a child process on a scratch database, registers an account, seeds
 * `rows` audit records for its tenant with generate_series (spread over the last 60 days; their
 * hashes are placeholders, the export does not check the chain), downloads GET /audit/export for the
 * whole range and reports rows, bytes, throughput and the gateway's resident memory before and
 * during the export (VmRSS of /proc/<pid>/status sampled every 50 ms), plus the process's
 * high-water mark since start (VmHWM), which includes the start-up peak.
 */
const DAY_MS = 24 * 60 * 60 * 1000;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** VmRSS (now) or VmHWM (the process's high-water mark) of /proc/<pid>/status, in MB. */
function rssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`))!;
  return Number(line.replace(/\D/g, '')) / 1024;
}

async function waitUntilReady(baseUrl: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ready = await fetch(`${baseUrl}/ready`).then((r) => r.status === 200, () => false);
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('the gateway did not become ready within 60 s');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '1000000' }, format: { type: 'string', default: 'json' },
      // V8 flags for the gateway process (memory experiments); the default is the gateway's own start.
      'gateway-node-options': { type: 'string', default: '--max-semi-space-size=4' },
      // A slow client (MiB/s; 0 = as fast as it can): the gateway must hold back, not buffer.
      'client-mibps': { type: 'string', default: '0' },
    },
  });
  const rows = Number(values.rows);
  const results = startResults('audit-export', values);
  const db = await createAuditDatabase('platform_audit_export_bench');
  let gateway: ChildProcess | undefined;
  let sampler: NodeJS.Timeout | undefined;
  try {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    // The compiled gateway, as production runs it (npm run build first; the npm script does).
    gateway = spawn(process.execPath, [join(repoRoot, 'dist/api/server.js')], {
      env: {
        ...process.env, API_PORT: String(port), LOG_LEVEL: 'warn', NODE_ENV: 'test', NODE_OPTIONS: values['gateway-node-options'],
        DATABASE_URL: db.appUrl, DATABASE_OWNER_URL: db.ownerUrl, ANALYTICS_DATABASE_URL: onDatabase(db.appUrl, db.name),
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    await waitUntilReady(baseUrl);
    const registered = await fetch(`${baseUrl}/v1/auth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: uniqueEmail('bench'), password: GOOD_PASSWORD }),
    }).then((r) => r.json() as Promise<{ accessToken: string; tenant: { id: string } }>);
    const tenantId = registered.tenant.id;
    console.log(`gateway ready (pid ${gateway.pid}, RSS ${rssMb(gateway.pid!, 'VmRSS').toFixed(0)} MB); seeding ${rows} rows for tenant ${tenantId}`);

    const until = new Date();
    const since = new Date(until.getTime() - 60 * DAY_MS);
    for (let month = new Date(since); month <= until; month = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1))) {
      await db.owner.query(sql.unsafe`SELECT audit_ensure_partition(${month.toISOString().slice(0, 10)}::date)`);
    }
    const seeding = performance.now();
    const chunk = 100_000;
    for (let from = 1; from <= rows; from += chunk) {
      const to = Math.min(rows, from + chunk - 1);
      await db.owner.query(sql.unsafe`
        INSERT INTO audit_records (id, tenant_id, seq, action, entity_type, entity_id, actor_id, actor_ip, actor_user_agent,
                                   before, after, meta, trace_id, occurred_at, prev_hash, hash)
        SELECT gen_random_uuid(), ${tenantId}, n, 'money.wallet.credited', 'wallet', 'wallet-' || (n % 500),
               'actor-' || (n % 50), '203.0.113.9', 'bench/1.0 (export, "quoted", =formula)',
               jsonb_build_object('balance', n), jsonb_build_object('balance', n + 100),
               jsonb_build_object('amount', 100, 'currency', 'USD', 'note', 'line one' || chr(10) || 'line, two'),
               md5(n::text) || md5((n + 1)::text),
               ${since.toISOString()}::timestamptz + (n * (${until.getTime() - since.getTime()}::float8 / ${rows})) * interval '1 millisecond',
               sha256(int8send(n - 1)), sha256(int8send(n))
        FROM generate_series(${from}::int8, ${to}::int8) AS n
      `);
      console.log(`  seeded ${to} / ${rows} rows (${((performance.now() - seeding) / 1000).toFixed(1)} s)`);
    }
    await db.owner.query(sql.unsafe`ANALYZE audit_records`);

    const query = new URLSearchParams({ format: values.format, since: since.toISOString(), until: new Date(until.getTime() + 1000).toISOString() });
    const pid = gateway.pid!;
    const before = rssMb(pid, 'VmRSS');
    let duringExport = before;
    sampler = setInterval(() => { duringExport = Math.max(duringExport, rssMb(pid, 'VmRSS')); }, 50);
    const started = performance.now();
    const response = await fetch(`${baseUrl}/v1/audit/export?${query.toString()}`, { headers: { authorization: `Bearer ${registered.accessToken}` } });
    if (response.status !== 200) throw new Error(`export answered ${response.status}: ${await response.text()}`);
    let bytes = 0;
    let lines = 0;
    const clientBytesPerMs = Number(values['client-mibps']) * 1024 * 1024 / 1000;
    // undici types a response body as ReadableStream<any>; its chunks are bytes.
    for await (const part of response.body! as AsyncIterable<Uint8Array>) {
      bytes += part.length;
      const ahead = clientBytesPerMs > 0 ? bytes / clientBytesPerMs - (performance.now() - started) : 0;
      if (ahead > 0) await new Promise((resolve) => setTimeout(resolve, ahead));
      for (const byte of part) if (byte === 10) lines += 1;
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const peak = Math.max(duringExport, rssMb(pid, 'VmRSS'));
    console.log([
      `audit export (${values.format}): ${rows} rows, ${(bytes / 1024 / 1024).toFixed(1)} MiB, ${lines} lines in ${seconds.toFixed(1)} s`,
      `  throughput: ${Math.round(rows / seconds)} rows/s, ${(bytes / 1024 / 1024 / seconds).toFixed(1)} MiB/s`,
      `  gateway RSS: ${before.toFixed(0)} MB before the export, peak ${peak.toFixed(0)} MB during it (+${(peak - before).toFixed(0)} MB; `
        + `target < 200 MB: ${peak < 200 ? 'OK' : 'OVER'}); process high-water mark since start ${rssMb(pid, 'VmHWM').toFixed(0)} MB`,
    ].join('\n'));
    const highWater = rssMb(pid, 'VmHWM');
    results.write({ bytes, lines, seconds, rowsPerSecond: rows / seconds, rssMbBefore: before, rssMbPeak: peak, rssMbHighWaterSinceStart: highWater }, [
      below('an export of 1 000 000 rows keeps the gateway below 200 MB (issue 7)', rows >= 1_000_000 ? peak : NaN, 200,
        `peak ${peak.toFixed(0)} MB (${values.format.toUpperCase()})`),
    ]);
    if (peak >= 200) process.exitCode = 1;
  } finally {
    clearInterval(sampler);
    gateway?.kill('SIGTERM');
    await new Promise((resolve) => (gateway && gateway.exitCode === null ? gateway.once('exit', resolve) : resolve(undefined)));
    await db.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
