import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createConsumer, type Kafka } from '../../common/kafka';
import type { PartitionBounds } from '../../common/kafka-groups';
import { repoRoot } from '../../common/paths';
import { EVENT_HEADERS, decodeEvent, headerValue } from '../../services/events/envelope';
import type { ReceivedEvent } from './kafka';

/**
 * Replicas of the background tier as child processes, for the tests that run two of something at
 * once and kill one (test/integration/replicas-*.int.test.ts): a process whose JSON log lines the
 * test reads as its clock, and a reader of exactly one stretch of a Kafka topic, so a test counts
 * every copy of its events (a duplicate published after the reader stopped cannot hide).
 */

export type LogLine = Record<string, unknown> & { msg?: string };

/** The JSON lines a process logs, and a way to wait for one of them. */
export class JsonLog {
  readonly lines: LogLine[] = [];
  private partial = '';
  private waiters: Array<{ match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }> = [];

  feed(chunk: string): void {
    const text = this.partial + chunk;
    const complete = text.split('\n');
    this.partial = complete.pop() ?? '';
    for (const raw of complete) {
      let line: LogLine;
      try {
        line = JSON.parse(raw) as LogLine;
      } catch {
        continue;
      }
      this.lines.push(line);
      this.waiters = this.waiters.filter((waiter) => {
        if (!waiter.match(line)) return true;
        waiter.resolve(line);
        return false;
      });
    }
  }

  /** The lines whose message is `msg`. */
  all(msg: string): LogLine[] {
    return this.lines.filter((line) => line.msg === msg);
  }

  waitFor(match: (line: LogLine) => boolean, what: string, timeoutMs = 60_000): Promise<LogLine> {
    const seen = this.lines.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no log line "${what}" within ${timeoutMs} ms; last lines:\n${
        this.lines.slice(-10).map((line) => JSON.stringify(line)).join('\n')}`)), timeoutMs);
      this.waiters.push({ match, resolve: (line) => { clearTimeout(timer); resolve(line); } });
    });
  }

  waitForMessage(msg: string, timeoutMs?: number): Promise<LogLine> {
    return this.waitFor((line) => line.msg === msg, msg, timeoutMs);
  }
}

export interface ReplicaProcess {
  child: ChildProcess;
  log: JsonLog;
  /** Resolves when the process has exited, with its signal or exit code. */
  exited: Promise<NodeJS.Signals | number | null>;
  /** SIGKILL (a crash: nothing drains, nothing closes) or SIGTERM (a drain), then waits for the exit. */
  stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<NodeJS.Signals | number | null>;
  /** Writes a line to the process's stdin (a go signal some entry points wait for). */
  send(line: string): void;
}

/**
 * A TypeScript entry point (the platform's own, like workers/outbox-relay.ts, or a test entry) as a
 * child process, run from source through the swc register hook as test/helpers/money-worker.ts does,
 * logging JSON lines at info into a JsonLog. Its metrics endpoint is off unless `env` names a port.
 */
export function spawnReplica(entry: string, args: string[] = [], env: Record<string, string> = {}): ReplicaProcess {
  const child = spawn(process.execPath, ['-r', join(repoRoot, 'test/helpers/app-swc-register.cjs'), join(repoRoot, entry), ...args], {
    cwd: repoRoot,
    env: { ...process.env, NODE_OPTIONS: '', NODE_ENV: 'test', LOG_LEVEL: 'info', WORKER_METRICS_PORT: '', ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const log = new JsonLog();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => log.feed(chunk));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  return {
    child, log, exited,
    stop: async (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    send: (line) => { child.stdin.write(`${line}\n`); },
  };
}

export interface TopicRange {
  kafka: Kafka;
  topic: string;
  /** Where to start on each partition (the high watermarks taken before the test wrote). */
  from: readonly PartitionBounds[];
  /** Where to stop on each partition (the high watermarks taken once everything was written): exclusive. */
  to: readonly PartitionBounds[];
  /** Only this tenant's events (by header); every message when absent. */
  tenantId?: string;
  timeoutMs?: number;
}

/**
 * Every message of the topic between `from` and `to` (per partition), decoded, in each partition's
 * order: reading stops at `to`, not at the first sight of what the test expects, so a second copy
 * of an event published before `to` is counted.
 */
export async function readTopicRange({ kafka, topic, from, to, tenantId, timeoutMs = 60_000 }: TopicRange): Promise<ReceivedEvent[]> {
  const start = new Map(from.map(({ partition, high }) => [partition, high]));
  const remaining = new Map(to
    .map(({ partition, high }) => [partition, high] as const)
    .filter(([partition, end]) => end > (start.get(partition) ?? 0n)));
  const events: ReceivedEvent[] = [];
  if (remaining.size === 0) return events;
  const consumer = createConsumer(kafka, { groupId: `test.range.${randomUUID()}`, maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
  let timer: NodeJS.Timeout | undefined;
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms reading ${topic}; partitions not read to their end: ${
        [...remaining.keys()].join(', ')}`)), timeoutMs);
      consumer.run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          const offset = BigInt(message.offset);
          const end = remaining.get(partition);
          if (end === undefined || offset < (start.get(partition) ?? 0n) || offset >= end) return;
          if (tenantId === undefined || headerValue(message, EVENT_HEADERS.tenantId) === tenantId) {
            const headers = Object.fromEntries(Object.keys(message.headers ?? {}).map((name) => [name, headerValue(message, name)!]));
            events.push({ ...decodeEvent(message), topic, partition, offset: Number(offset), headers });
          }
          if (offset === end - 1n) {
            remaining.delete(partition);
            if (remaining.size === 0) resolve();
          }
        },
      }).then(() => {
        for (const [partition, offset] of start) consumer.seek({ topic, partition, offset: offset.toString() });
      }, reject);
    });
    return events;
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
}

/** How many copies of each id a list holds. */
export function copiesById(ids: readonly string[]): Map<string, number> {
  const copies = new Map<string, number>();
  for (const id of ids) copies.set(id, (copies.get(id) ?? 0) + 1);
  return copies;
}
