import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { config } from '../../common/config';
import { recordedPid } from '../lib/load';

/**
 * The CPU, memory and open files of every process of the running platform, sampled while
 * `npm run bench:platform` runs: the application's processes (one of each kind, or the cluster
 * profile's replicas) and the servers, all found through the pidfiles the bring-up records
 * (`$PLATFORM_DATA/run`), and PostgreSQL as the sum of its processes (a backend per connection).
 */

/** One reading of one process (or of PostgreSQL's processes together). */
export interface Reading {
  /** Seconds since the run began. */
  at: number;
  /** Share of one core used since the previous reading (1 = a whole core). */
  cpu: number;
  /** Resident memory in MiB: RSS, or for PostgreSQL the proportional share (PSS) of its processes, whose shared buffers every backend maps. */
  memoryMiB: number;
  openFiles: number;
  pid: number;
}

/** A process as the report names it, with its readings. */
export interface Sampled {
  name: string;
  /** The platform's own code (gateways, workers, relay, audit consumer), a server it runs on, or the bench's load generator. */
  kind: 'application' | 'server' | 'client';
  readings: Reading[];
}

interface Raw { ticks: number; memoryKiB: number; openFiles: number; pid: number; parent: number }

const TICKS_PER_SECOND = 100;

/** The bring-up's pidfiles: `app/<name>.pid` for the application, `<name>.pid` for the servers. */
function recordedProcesses(): { name: string; kind: Sampled['kind']; pid: number }[] {
  const run = join(config().dataDir, 'run');
  const named = (directory: string, prefix: string) => readdirSync(join(run, directory)).filter((file) => file.endsWith('.pid'))
    .map((file) => `${prefix}${file.slice(0, -'.pid'.length)}`);
  return [...named('app', 'app/').map((name) => ({ name, kind: 'application' as const })), ...named('.', '').map((name) => ({ name, kind: 'server' as const }))]
    .flatMap(({ name, kind }) => {
      const pid = recordedPid(name);
      return pid === undefined ? [] : [{ name: name.replace(/^app\//, ''), kind, pid }];
    });
}

/** Ticks, memory and open files of one pid; undefined once it has ended. */
function readPid(pid: number, proportional: boolean): Raw | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name (which may hold spaces): ppid is field 4; utime, stime, cutime, cstime are fields 14-17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0);
    const memory = proportional
      ? /^Pss:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))
      : /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { ticks, memoryKiB: Number(memory?.[1] ?? 0), openFiles: readdirSync(`/proc/${pid}/fd`).length, pid, parent: Number(fields[1]) };
  } catch {
    return undefined;
  }
}

/**
 * The server's own process among PostgreSQL's: the one whose parent is not one of them (every backend
 * is a child of the postmaster). Its pid names the server across readings: backends come and go.
 */
export function postmasterOf(processes: readonly { pid: number; parent: number }[]): number | undefined {
  const pids = new Set(processes.map(({ pid }) => pid));
  return processes.find(({ parent }) => !pids.has(parent))?.pid;
}

/** PostgreSQL's processes together: the postmaster counts its ended backends' CPU in its children's fields. */
function readPostgres(): Raw | undefined {
  const total: Raw = { ticks: 0, memoryKiB: 0, openFiles: 0, pid: 0, parent: 0 };
  const processes: Raw[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let command: string;
    try {
      command = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (command !== 'postgres') continue;
    const raw = readPid(Number(entry), true);
    if (!raw) continue;
    total.ticks += raw.ticks;
    total.memoryKiB += raw.memoryKiB;
    total.openFiles += raw.openFiles;
    processes.push(raw);
  }
  const postmaster = postmasterOf(processes);
  return postmaster === undefined ? undefined : { ...total, pid: postmaster };
}

/**
 * Samples every `intervalMs` until stopped. A process restarted meanwhile (another pid under the
 * same name) keeps its series; the report shows the pid change.
 */
export class ProcessSampler {
  private readonly series = new Map<string, Sampled>();
  private readonly last = new Map<string, { raw: Raw; at: number }>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly started: number, private readonly intervalMs = 5000) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
  }

  stop(): Sampled[] {
    clearInterval(this.timer);
    this.sample();
    return [...this.series.values()];
  }

  private sample(): void {
    const at = (Date.now() - this.started) / 1000;
    const processes = [
      ...recordedProcesses().map(({ name, kind, pid }) => ({ name, kind, raw: readPid(pid, false) })),
      { name: 'postgres', kind: 'server' as const, raw: readPostgres() },
      { name: 'bench client', kind: 'client' as const, raw: readPid(process.pid, false) },
    ];
    for (const { name, kind, raw } of processes) {
      if (!raw) continue;
      const previous = this.last.get(name);
      this.last.set(name, { raw, at });
      // The first reading, or one after a restart, has no interval to charge CPU to.
      if (!previous || previous.raw.pid !== raw.pid) continue;
      const cpu = Math.max(0, raw.ticks - previous.raw.ticks) / TICKS_PER_SECOND / Math.max(0.001, at - previous.at);
      const entry = this.series.get(name) ?? { name, kind, readings: [] };
      entry.readings.push({ at, cpu, memoryMiB: raw.memoryKiB / 1024, openFiles: raw.openFiles, pid: raw.pid });
      this.series.set(name, entry);
    }
  }
}
