import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { config } from '../../common/config';
import { repoRoot } from '../../common/paths';
import { recordedPid } from '../lib/load';

/**
 * What a fault kills, and how the platform is brought back: every process of the platform, the
 * application's and the servers', found through the pidfiles the bring-up scripts record
 * (`$PLATFORM_DATA/run`), PostgreSQL through its cluster's postmaster.pid.
 */

export const TARGETS = ['gateway', 'worker', 'relay', 'audit-consumer', 'temporal', 'postgres', 'redis', 'kafka', 's3', 'clamav'] as const;
export type Target = (typeof TARGETS)[number];

/** The recorded names of each target's processes in either profile (pidfiles under run/). */
const RECORDED: Record<Exclude<Target, 'postgres'>, string[]> = {
  gateway: ['app/api-1', 'app/api-2', 'app/api'],
  worker: ['app/worker-1', 'app/worker-2', 'app/worker'],
  relay: ['app/relay-1', 'app/relay-2', 'app/relay'],
  'audit-consumer': ['app/audit-consumer-1', 'app/audit-consumer-2', 'app/audit-consumer'],
  temporal: ['temporal-server', 'temporal'],
  redis: ['redis'], kafka: ['kafka'], s3: ['s3'], clamav: ['clamav'],
};

export function parseTargets(list: string): Target[] {
  const targets = list.split(',').map((name) => name.trim());
  const unknown = targets.filter((name) => !(TARGETS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown fault targets: ${unknown.join(', ')} (known: ${TARGETS.join(', ')})`);
  return targets as Target[];
}

/** The running processes a target names, each as `name` (for the report) and its pid. */
export function processesOf(target: Target): { name: string; pid: number }[] {
  if (target === 'postgres') {
    const pid = postmasterPid();
    return pid === undefined ? [] : [{ name: 'postgres', pid }];
  }
  return RECORDED[target].flatMap((name) => {
    const pid = recordedPid(name);
    return pid === undefined ? [] : [{ name, pid }];
  });
}

/** The postmaster of the Debian cluster on the platform's port (scripts/infra/services/postgres.sh). */
function postmasterPid(): number | undefined {
  const port = String(new URL(config().db.ownerUrl).port || 5432);
  const line = execFileSync('pg_lsclusters', ['-h'], { encoding: 'utf8' }).split('\n').map((row) => row.trim().split(/\s+/)).find((row) => row[2] === port);
  if (!line) return undefined;
  try {
    const pid = Number(readFileSync(join(line[5], 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** The profile the platform runs (`default` or `cluster`), as the bring-up recorded it. */
export function runningProfile(): string {
  return readFileSync(join(config().dataDir, 'run', 'profile'), 'utf8').trim();
}

/**
 * Brings the platform back as the first command does: `npm run up` of the running profile starts
 * whatever is not running, servers first. Its output is kept for the report when it fails.
 */
export async function bringBack(profile = runningProfile()): Promise<void> {
  await promisify(execFile)('bash', [join(repoRoot, 'scripts/infra/up.sh'), ...(profile === 'cluster' ? ['--cluster'] : [])], { cwd: repoRoot, maxBuffer: 1 << 26 });
}
