import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../../common/paths';

// scripts/infra/lib.sh's read_pidfile decides whether `npm run up` starts a process or leaves the
// one running alone. After a reboot a pidfile's number had come to name a kernel thread, so up left
// the gateway "already running" and waited a minute for a /ready that never came.

let dir: string;
let pidfile: string;
let sleeper: ChildProcess;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pidfile-'));
  pidfile = join(dir, 'api.pid');
  sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
});
afterEach(() => {
  sleeper.kill();
  rmSync(dir, { recursive: true, force: true });
});

/** read_pidfile as the start-up scripts run it (lib.sh sets -euo pipefail): the pid it printed, or null. */
function readPidfile(): string | null {
  const run = spawnSync('bash', ['-c', 'source scripts/infra/lib.sh && read_pidfile "$1"', '_', pidfile], { cwd: repoRoot, encoding: 'utf8' });
  return run.status === 0 ? run.stdout.trim() : null;
}

describe('read_pidfile', () => {
  it('names the live process the file was written for', () => {
    writeFileSync(pidfile, `${sleeper.pid}\n`);
    expect(readPidfile()).toBe(String(sleeper.pid));
    expect(existsSync(pidfile)).toBe(true);
  });

  it('forgets a file whose number now belongs to a process started after it was written', () => {
    writeFileSync(pidfile, `${sleeper.pid}\n`);
    const beforeTheProcess = new Date(Date.now() - 3_600_000);
    utimesSync(pidfile, beforeTheProcess, beforeTheProcess);
    expect(readPidfile()).toBeNull();
    expect(existsSync(pidfile)).toBe(false);
  });

  it('forgets a file whose process is gone', async () => {
    writeFileSync(pidfile, `${sleeper.pid}\n`);
    const exited = new Promise((resolve) => sleeper.once('exit', resolve));
    sleeper.kill();
    await exited;
    expect(readPidfile()).toBeNull();
    expect(existsSync(pidfile)).toBe(false);
  });
});
