import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIX } from '../../bench/platform/mix';
import { runBenchScript } from '../helpers/bench-script';

/**
 * The quick variant of `npm run bench:platform` (bench/platform.bench.ts): half a minute of the
 * realistic mix over three tenants on the running platform. It checks that the bench runs, that
 * every route family was served without an error, that every process of the platform was sampled,
 * and the run's invariants (every backlog back to zero, no process restarted); its figures are the
 * long run's business (docs/performance/platform.md), not this test's.
 */
jest.setTimeout(600_000);

interface Results {
  families: { family: string; answered: number; errors: Record<string, number> }[];
  processes: { name: string; kind: string }[];
  drained: { backlogs: { name: string; waiting: number }[] };
  violations: string[];
}

it('serves every route family of the mix and drains every backlog after it', async () => {
  const results = join(mkdtempSync(join(tmpdir(), 'bench-platform-')), 'platform.json');
  const { code, output } = await runBenchScript('bench/platform.bench.ts', [
    '--minutes', '0.5', '--tenants', '3', '--rate', '20', '--seed', '3', '--settle-seconds', '120', '--results', results,
  ]);
  if (code !== 0) throw new Error(`npm run bench:platform exited with ${code}:\n${output}`);
  const run = JSON.parse(readFileSync(results, 'utf8')) as Results;
  expect(run.violations).toEqual([]);
  expect(run.families.map(({ family }) => family).sort()).toEqual([...new Set(MIX.map(({ family }) => family))].sort());
  expect(run.families.filter(({ answered }) => answered === 0)).toEqual([]);
  expect(run.families.filter(({ errors }) => Object.keys(errors).length > 0)).toEqual([]);
  // The bring-up's processes of either profile (api or api-1, api-2...), and PostgreSQL's together.
  const sampled = run.processes.map(({ name }) => name.replace(/-\d+$/, ''));
  expect(sampled).toEqual(expect.arrayContaining(['api', 'worker', 'relay', 'audit-consumer', 'postgres', 'kafka', 'redis']));
  expect(run.drained.backlogs.filter(({ name }) => name.startsWith('temporal ')).length).toBeGreaterThan(0);
  expect(run.drained.backlogs.filter(({ name }) => name.startsWith('postgres ')).length).toBe(3);
}, 600_000);
