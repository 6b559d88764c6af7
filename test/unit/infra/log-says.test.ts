import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../../common/paths';

// scripts/infra/lib.sh's log_says decides when a server or an app process has started (Kafka's
// "Kafka Server started", the gateway's first log line). Under `set -o pipefail` a `tail | grep -q`
// failed whenever more than a pipe buffer of log followed the match, and CI gave up on a healthy
// broker; these cases keep that from coming back.

let dir: string;
let log: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'log-says-'));
  log = join(dir, 'server.log');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs log_says as the start-up scripts do (lib.sh sets -euo pipefail); true when it found the pattern. */
function logSays(offset: number, pattern: string): boolean {
  const run = spawnSync('bash', ['-c', 'source scripts/infra/lib.sh && log_says "$1" "$2" "$3"', '_', log, String(offset), pattern], { cwd: repoRoot });
  return run.status === 0;
}

const manyLines = (count: number) => Array.from({ length: count }, (_, i) => `INFO loading group metadata ${i} ${'x'.repeat(80)}\n`).join('');

describe('log_says', () => {
  it('finds the pattern when far more than a pipe buffer of log follows it', () => {
    writeFileSync(log, manyLines(100));
    const offset = statSync(log).size;
    appendFileSync(log, `INFO Kafka Server started\n${manyLines(20_000)}`);
    expect(logSays(offset, 'Kafka Server started')).toBe(true);
  });

  it('looks only past the offset, so a line of an earlier start does not count', () => {
    writeFileSync(log, `INFO Kafka Server started\n${manyLines(10)}`);
    const offset = statSync(log).size;
    appendFileSync(log, manyLines(20_000));
    expect(logSays(offset, 'Kafka Server started')).toBe(false);
  });

  it('reads a log rotated below the offset from its start', () => {
    writeFileSync(log, 'INFO Kafka Server started\n');
    expect(logSays(10_000_000, 'Kafka Server started')).toBe(true);
  });
});
