import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../common/paths';

/**
 * Runs a bench script (such as `bench/faults/index.ts`, from source as `npm run` runs it) to its end,
 * with its stdout and stderr together: a quick variant's test judges its exit code and, on failure,
 * shows the whole report.
 */
export function runBenchScript(entry: string, args: readonly string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(repoRoot, 'node_modules/.bin/node'), ['-r', './test/helpers/app-swc-register.cjs', entry, ...args], {
      cwd: repoRoot, env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}
