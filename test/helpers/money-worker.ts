import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../common/paths';

export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  /** Resolves when the process has exited, with its signal or exit code. */
  exited: Promise<NodeJS.Signals | number | null>;
  /** SIGKILL (a crash: nothing drains, nothing closes) or SIGTERM (a drain), then waits for the exit. */
  stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<NodeJS.Signals | number | null>;
}

/**
 * The money Worker (test/helpers/money-worker-entry.ts) as a child process polling `taskQueue` on
 * the dev server. Resolves once the Worker polls. A process of its own, so a test can SIGKILL it
 * mid-operation.
 */
export function startMoneyWorkerProcess(taskQueue: string, env: Record<string, string> = {}): Promise<WorkerProcess> {
  return startWorkerProcess('test/helpers/money-worker-entry.ts', 'money worker running', [], { ...env, MONEY_TASK_QUEUE: taskQueue });
}

/**
 * A Temporal worker entry point (TypeScript, run from source through the swc register hook like
 * bench/lib/load.ts's servers) as a child process; resolves once it logs a JSON line whose message
 * is `readyMessage`. Its metrics endpoint is off unless `env` names a WORKER_METRICS_PORT: the
 * platform's own worker holds the default port, and a second process binding it would fail.
 */
export function startWorkerProcess(entry: string, readyMessage: string, args: string[] = [], env: Record<string, string> = {}): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['-r', join(repoRoot, 'test/helpers/app-swc-register.cjs'), join(repoRoot, entry), ...args], {
    cwd: repoRoot,
    env: { ...process.env, NODE_OPTIONS: '', LOG_LEVEL: 'info', WORKER_METRICS_PORT: '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  const stop = async (signal: 'SIGKILL' | 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      if (!buffered.includes(`"${readyMessage}"`)) return;
      child.stdout.off('data', onData);
      child.stdout.resume(); // the worker's log is drained, not read
      resolve({ child, pid: child.pid!, exited, stop });
    };
    child.stdout.on('data', onData);
    void exited.then((how) => reject(new Error(`${entry} exited (${how}) before polling`)));
  });
}
