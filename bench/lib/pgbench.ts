import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../common/paths';
import { percentile, type Phase } from './load';

/**
 * A pgbench script: a template under bench/ with its placeholders filled in (every occurrence of
 * each key of `fill`), run with `weight` among the run's scripts.
 */
export interface PgbenchScript {
  template: string;
  fill: Record<string, string>;
  weight: number;
}

export interface PgbenchRun {
  name: string;
  scripts: readonly PgbenchScript[];
  concurrency: number;
  seconds: number;
  /** pgbench variables (-D name=value), e.g. the tenant the scripts work in. */
  variables: Record<string, string>;
  url: string;
}

/** A pgbench phase with its latencies (ms, ascending), so phases run in slices can be merged. */
export interface PgbenchPhase extends Phase {
  latencies: number[];
}

/**
 * `/usr/bin/pgbench -M extended` with `concurrency` clients on 2 threads for `seconds`: the ceiling a
 * benchmark compares an API path with. Latencies come from pgbench's per-transaction log.
 */
export function runPgbench(run: PgbenchRun): PgbenchPhase {
  const dir = mkdtempSync(join(tmpdir(), 'bench-pgbench-'));
  try {
    const files = run.scripts.map((script, i) => {
      let text = readFileSync(join(repoRoot, script.template), 'utf8');
      for (const [placeholder, value] of Object.entries(script.fill)) text = text.replaceAll(placeholder, value);
      const file = join(dir, `script-${i}.sql`);
      writeFileSync(file, text);
      return `${file}@${script.weight}`;
    });
    const result = spawnSync('/usr/bin/pgbench', [
      '-n', '-M', 'extended', '-c', String(run.concurrency), '-j', '2', '-T', String(run.seconds),
      ...files.flatMap((file) => ['-f', file]),
      ...Object.entries(run.variables).flatMap(([name, value]) => ['-D', `${name}=${value}`]),
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
    return { name: run.name, count: latencies.length, seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), latencies };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
