import type { Reading, Sampled } from './processes';

/**
 * What a soak must show of the platform's processes: their memory and open files flat after the
 * warm-up, and none of them restarted. Pure functions over the sampler's readings, so
 * test/unit/bench/platform-soak.test.ts shows each failing on the readings a leak would leave.
 */

/** A process's figures over the load: its first minute after the warm-up against its last minute. */
export interface Growth {
  name: string;
  kind: Sampled['kind'];
  cpu: number;
  memoryMiB: [number, number];
  openFiles: [number, number];
  restarts: number;
}

/** The allowed change of memory and open files between the two windows (the issue's ±10 %). */
export const GROWTH_TOLERANCE = 0.1;
const WINDOW_SECONDS = 60;

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

/** The figures of each process between `from` (the warm-up's end) and `to` (the load's end), in seconds of the run. */
export function growthOf(sampled: readonly Sampled[], from: number, to: number): Growth[] {
  return sampled.map(({ name, kind, readings }) => {
    const during = readings.filter(({ at }) => at >= from && at <= to);
    const first = during.filter(({ at }) => at < from + WINDOW_SECONDS);
    const last = during.filter(({ at }) => at > to - WINDOW_SECONDS);
    const of = (window: readonly Reading[], field: 'memoryMiB' | 'openFiles') => mean(window.map((reading) => reading[field]));
    return {
      name, kind,
      cpu: mean(during.map(({ cpu }) => cpu)),
      memoryMiB: [of(first, 'memoryMiB'), of(last, 'memoryMiB')],
      openFiles: [of(first, 'openFiles'), of(last, 'openFiles')],
      restarts: new Set(readings.map(({ pid }) => pid)).size - 1,
    };
  });
}

/** Whether a figure grew past the tolerance from its first window to its last. */
export const grew = ([first, last]: [number, number]) => last > first * (1 + GROWTH_TOLERANCE);

/**
 * The application's processes whose memory or open files grew past the tolerance, and every process
 * that restarted. The servers' memory is reported, not judged: a JVM's heap and PostgreSQL's shared
 * buffers fill up to what they were configured to take, which is growth by design.
 */
export function judgeGrowth(growth: readonly Growth[]): string[] {
  return growth.flatMap((process) => [
    ...(process.kind === 'application' && grew(process.memoryMiB)
      ? [`${process.name}: memory grew from ${process.memoryMiB[0].toFixed(0)} to ${process.memoryMiB[1].toFixed(0)} MiB`] : []),
    ...(process.kind === 'application' && grew(process.openFiles)
      ? [`${process.name}: open files grew from ${process.openFiles[0].toFixed(0)} to ${process.openFiles[1].toFixed(0)}`] : []),
    ...(process.restarts > 0 ? [`${process.name} restarted ${process.restarts} times`] : []),
  ]);
}
