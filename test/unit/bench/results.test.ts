import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allOf, atLeast, atMost, below, reported, startResults } from '../../../bench/lib/results';

/**
 * The one envelope every bench writes its run in (bench/lib/results.ts), and the judges of its targets.
 * Fixed figures only: nothing here is timed.
 */
describe('startResults', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'bench-results-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the envelope (time, cores, load before and after, options, targets), then the bench\'s figures', () => {
    const file = join(dir, 'nested', 'gateway.json');
    const targets = [atLeast('full pipeline ≥ 60 % of checks off (issue 4)', 0.61, 0.6, '61 %')];
    const written = startResults('gateway', { concurrency: '16' }, file).write({ phases: [{ name: 'hello', count: 3 }] }, targets);

    expect(written).toBe(file);
    const run = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(run)).toEqual(['at', 'cores', 'loadAverageBefore', 'loadAverageAfter', 'options', 'targets', 'phases']);
    expect(new Date(run.at as string).toISOString()).toBe(run.at);
    expect(run.cores).toBeGreaterThan(0);
    expect(run.loadAverageBefore).toHaveLength(3);
    expect(run.loadAverageAfter).toHaveLength(3);
    expect(run.options).toEqual({ concurrency: '16' });
    expect(run.targets).toEqual([{ target: 'full pipeline ≥ 60 % of checks off (issue 4)', latest: '61 %', met: true }]);
    expect(run.phases).toEqual([{ name: 'hello', count: 3 }]);
  });
});

describe('the target judges', () => {
  it.each([
    ['atLeast, met at the limit', atLeast('t', 0.6, 0.6, '60 %'), true],
    ['atLeast, missed', atLeast('t', 0.59, 0.6, '59 %'), false],
    ['below, missed at the limit', below('t', 20, 20, '20 ms'), false],
    ['below, met', below('t', 19.9, 20, '19.9 ms'), true],
    ['atMost, met at the limit', atMost('t', 15, 15, '15 ms'), true],
    ['atMost, missed', atMost('t', 15.1, 15, '15.1 ms'), false],
    ['a figure no target names', reported('t', '3 ms'), null],
  ])('%s', (_case, result, met) => {
    expect(result.met).toBe(met);
  });

  it('reports a figure this run\'s options did not measure (NaN) as not measured, neither met nor missed', () => {
    expect(atLeast('t', NaN, 0.6, 'NaN %')).toEqual({ target: 't', latest: 'not measured in this run', met: null });
    expect(below('t', NaN, 20, 'NaN ms').met).toBeNull();
  });

  it('meets a target of several conditions only when every one is met', () => {
    const parts = [atLeast('', 160, 150, '160/s'), atMost('', 480, 500, 'p99 480 ms')];
    expect(allOf('t', parts)).toEqual({ target: 't', latest: '160/s, p99 480 ms', met: true });
    expect(allOf('t', [...parts, atMost('', 33.7, 12, '33.7 ms CPU')]).met).toBe(false);
    expect(allOf('t', [atLeast('', NaN, 150, ''), atMost('', NaN, 500, '')])).toEqual({ target: 't', latest: 'not measured in this run', met: null });
  });
});
