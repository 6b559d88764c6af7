import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchNames, BEGIN, END, performanceDocs, renderArea, withRegion, type Run } from '../../../scripts/performance-docs';

/**
 * docs/performance/ is rendered from the benches' results (scripts/performance-docs.ts): a table edited
 * by hand, or a results file committed without `npm run docs:performance`, fails here. Reads the
 * committed files only; no bench runs, so nothing depends on the machine's speed.
 */
describe('docs/performance is generated from bench/results', () => {
  it.each(performanceDocs().map((page) => [page.file.slice(page.file.indexOf('docs/performance/')), page]))(
    '%s matches what `npm run docs:performance` renders', (_file, page) => {
      expect(page.current).toBe(page.generated);
    },
  );

  it('knows every bench by its area: its file is named <area>.bench.ts or <area>-<what>.bench.ts after a page', () => {
    const pages = new Set(performanceDocs().map((page) => page.file.slice(page.file.lastIndexOf('/') + 1, -'.md'.length)));
    expect(benchNames().map((bench) => bench.split('-')[0]).filter((area) => !pages.has(area))).toEqual([]);
  });

  it('judges a run written before runs carried their targets by its bench\'s rules (the soak of 2026-11-29 16:19, cut down)', () => {
    const results = JSON.parse(readFileSync(join(__dirname, 'platform-run-2026-11-29T16-19.json'), 'utf8')) as Run['results'];
    const region = renderArea('platform', [{ name: 'platform', results }], []);
    expect(region).toContain('| no process restarted (issue 36) | none | met |');
    expect(region).toMatch(/memory \(MiB\) of the application's processes within 10 % after the warm-up \(issue 36\) \| api \+22 % \(399 → 488\)[^|]*\| \*\*not met\*\* \|/);
  });
});

describe('renderArea', () => {
  const run: Run = {
    name: 'gateway',
    results: {
      at: '2026-11-30T09:15:02.000Z', cores: 2, loadAverageBefore: [0.5, 1, 1], loadAverageAfter: [2.25, 1, 1], options: {},
      targets: [
        { target: 'full pipeline ≥ 60 % of checks off (issue 4)', latest: '61 %', met: true },
        { target: 'a | b ≥ 75 %', latest: '74 %', met: false },
        { target: 'a figure without a target', latest: '3 ms', met: null },
      ],
    },
  };

  it('renders each target with its latest figure, the verdict, the run and the machine\'s load', () => {
    expect(renderArea('gateway', [run], ['gateway']).split('\n').slice(2)).toEqual([
      '| Target | Latest | | Run | Load average (1 min) before → after |',
      '|---|---|---|---|---|',
      '| full pipeline ≥ 60 % of checks off (issue 4) | 61 % | met | 2026-11-30 09:15 UTC, `gateway` | 0.50 → 2.25 on 2 cores |',
      '| a \\| b ≥ 75 % | 74 % | **not met** | 2026-11-30 09:15 UTC, `gateway` | 0.50 → 2.25 on 2 cores |',
      '| a figure without a target | 3 ms |  | 2026-11-30 09:15 UTC, `gateway` | 0.50 → 2.25 on 2 cores |',
      END,
    ]);
  });

  it('says so of an area, or a bench of an area, that has not run since the results became files', () => {
    expect(renderArea('data', [run], ['data', 'data-tenant-reads', 'gateway'])).toContain(
      '`bench/data.bench.ts`, `bench/data-tenant-reads.bench.ts`: not run since the results became files; the last hand-recorded figures are in the runs below.',
    );
    expect(renderArea('gateway', [run], ['gateway', 'gateway-other'])).toContain('\n\n`bench/gateway-other.bench.ts`: not run since');
  });
});

describe('withRegion', () => {
  it('replaces only the region between the markers', () => {
    expect(withRegion(`# Page\n\n${BEGIN}\nold\n${END}\n\n## Runs\n`, `${BEGIN}\nnew\n${END}`, 'page.md')).toBe(`# Page\n\n${BEGIN}\nnew\n${END}\n\n## Runs\n`);
  });

  it('refuses a page without its markers', () => {
    expect(() => withRegion('# Page\n| Target |\n', `${BEGIN}\n${END}`, 'page.md')).toThrow('page.md has no');
  });
});
