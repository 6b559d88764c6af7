import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { repoRoot } from '../../common/paths';

/**
 * Every bench writes its run to bench/results/<bench>.json through this one helper, in one envelope:
 * when it ran, on how many cores, the machine's load average before and after, the options it ran
 * with, its targets judged, then its own figures. docs/performance/ is generated from these files
 * (scripts/performance-docs.ts, `npm run docs:performance`), so a figure reaches the documents only
 * by a run: nothing else writes a results file.
 */
export const RESULTS_DIR = join(repoRoot, 'bench/results');

/** One of a bench's targets as its run judged it. */
export interface TargetResult {
  /** The target as docs/performance names it, with its issue: `full pipeline ≥ 60 % of checks off (issue 4)`. */
  target: string;
  /** The figure compared with the target, as the table shows it: `61 %`. */
  latest: string;
  /** Whether the figure met the target; null where the run reports a figure no target names, or did not measure it. */
  met: boolean | null;
}

/** What every results file holds before the bench's own figures. */
export interface ResultsEnvelope {
  at: string;
  cores: number;
  loadAverageBefore: number[];
  loadAverageAfter: number[];
  options: Record<string, unknown>;
  targets: TargetResult[];
}

export interface BenchResults {
  /** Writes the run: the envelope with `targets`, then `figures`. Answers the file's path. */
  write(figures: Record<string, unknown>, targets: readonly TargetResult[]): string;
}

/**
 * A run's results, started when its load begins (the load average before is read now). `name` is the
 * bench's file name without `.bench.ts` (`data`, `money-flows`); `file` overrides where it is written.
 */
export function startResults(name: string, options: Record<string, unknown>, file = join(RESULTS_DIR, `${name}.json`)): BenchResults {
  const loadAverageBefore = loadavg();
  return {
    write(figures, targets) {
      const envelope: ResultsEnvelope = {
        at: new Date().toISOString(), cores: cpus().length, loadAverageBefore, loadAverageAfter: loadavg(), options, targets: [...targets],
      };
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `${JSON.stringify({ ...envelope, ...figures }, null, 2)}\n`);
      process.stderr.write(`results written to ${file}\n`);
      return file;
    },
  };
}

const NOT_MEASURED = 'not measured in this run';

/** A figure that meets its target at `limit` or above (a share, a rate). NaN: not measured by this run's options. */
export function atLeast(target: string, value: number, limit: number, shown: string): TargetResult {
  return Number.isFinite(value) ? { target, latest: shown, met: value >= limit } : { target, latest: NOT_MEASURED, met: null };
}

/** A figure that meets its target below `limit` (a latency, a memory ceiling). NaN: not measured by this run's options. */
export function below(target: string, value: number, limit: number, shown: string): TargetResult {
  return Number.isFinite(value) ? { target, latest: shown, met: value < limit } : { target, latest: NOT_MEASURED, met: null };
}

/** A figure that meets its target at `limit` or below (a latency, a CPU cost). NaN: not measured by this run's options. */
export function atMost(target: string, value: number, limit: number, shown: string): TargetResult {
  return Number.isFinite(value) ? { target, latest: shown, met: value <= limit } : { target, latest: NOT_MEASURED, met: null };
}

/** A figure reported with no target named for it. */
export function reported(target: string, latest: string): TargetResult {
  return { target, latest, met: null };
}

/** Every one of the parts met (a target of several conditions); null when a part was not measured. */
export function allOf(target: string, parts: readonly TargetResult[]): TargetResult {
  if (parts.every((part) => part.met === null)) return { target, latest: NOT_MEASURED, met: null };
  const latest = parts.map((part) => part.latest).join(', ');
  if (parts.some((part) => part.met === null)) return { target, latest, met: null };
  return { target, latest, met: parts.every((part) => part.met) };
}

/** A figure rounded for a table: `2 743`, `16.7`. */
export const figure = (value: number, digits = 0): string => value.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits }).replaceAll(',', ' ');
