import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../common/paths';

/**
 * The quick variant of `npm run faults` (bench/faults/): a minute of the mixed load on the running
 * platform while a gateway, a worker and Redis are each killed with `kill -9` and brought back by
 * `npm run up`, then every invariant checked. It passes when the run reports no violation; its
 * figures are the long variant's business (docs/operations.md), not this test's.
 */
jest.setTimeout(600_000);

function runFaults(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(repoRoot, 'node_modules/.bin/node'), ['-r', './test/helpers/app-swc-register.cjs', 'bench/faults/index.ts', ...args], {
      cwd: repoRoot, env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

it('loses and doubles nothing while a gateway, a worker and Redis are killed under load', async () => {
  const { code, output } = await runFaults([
    '--minutes', '1', '--faults', '3', '--targets', 'gateway,worker,redis', '--clients', '4', '--tenants', '2', '--seed', '7', '--settle-seconds', '120',
  ]);
  // The whole report on failure: which invariant broke, and the faults around it.
  if (code !== 0) throw new Error(`npm run faults exited with ${code}:\n${output}`);
  expect(/Violations: (\d+)/.exec(output)?.[1]).toBe('0');
  expect(output.match(/: kill -9 /g)?.length).toBe(3);
}, 600_000);
