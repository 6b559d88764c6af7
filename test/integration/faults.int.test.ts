import { runBenchScript } from '../helpers/bench-script';

/**
 * The quick variant of `npm run faults` (bench/faults/): a minute of the mixed load on the running
 * platform while a gateway, a worker and Redis are each killed with `kill -9` and brought back by
 * `npm run up`, then every invariant checked. It passes when the run reports no violation; its
 * figures are the long variant's business (docs/faults.md), not this test's.
 */
jest.setTimeout(600_000);

it('loses and doubles nothing while a gateway, a worker and Redis are killed under load', async () => {
  const { code, output } = await runBenchScript('bench/faults/index.ts', [
    '--minutes', '1', '--faults', '3', '--targets', 'gateway,worker,redis', '--clients', '4', '--tenants', '2', '--seed', '7', '--settle-seconds', '120',
  ]);
  // The whole report on failure: which invariant broke, and the faults around it.
  if (code !== 0) throw new Error(`npm run faults exited with ${code}:\n${output}`);
  expect(/Violations: (\d+)/.exec(output)?.[1]).toBe('0');
  expect(output.match(/: kill -9 /g)?.length).toBe(3);
}, 600_000);
