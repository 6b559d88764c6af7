import type { Reading, Sampled } from './processes';

/**
 * What a soak must show of the platform's processes: their memory and open files flat after the
 * warm-up, and none of them restarted. Pure functions over the sampler's readings, so
 * test/unit/bench/platform-soak.test.ts shows each failing on the readings a leak would leave.
 */

/**
 * A process's figures over the load: memory and open files as their mean over the first half after
 * the warm-up against their mean over the second half. The resident set of a garbage-collected
 * process is a saw-tooth whose teeth can be many minutes long (the relay's climbed from 120 to
 * 162 MiB over 20 minutes and fell back at a full collection), and a process may settle after a few
 * minutes of deep ones (the audit consumer's): one minute against another compares where in a tooth
 * each fell, a half's mean does not. A leak raises the second half over the first, a steady one or a
 * step that stays (the gateway's, before its malloc was tuned: docs/decisions/gateway.md, "The
 * gateway's malloc").
 */
export interface Growth {
  name: string;
  kind: Sampled['kind'];
  cpu: number;
  memoryMiB: [number, number];
  openFiles: [number, number];
  restarts: number;
}

/** The allowed change of memory and open files from the first half to the second (the issue's ±10 %). */
export const GROWTH_TOLERANCE = 0.1;

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

export interface MinuteReading { minute: number; cpu: number; memoryMiB: number; openFiles: number }

/** A process's readings as one point a minute (their mean), as the results keep them. */
export function perMinute(readings: readonly Reading[]): MinuteReading[] {
  const minutes = new Map<number, Reading[]>();
  for (const reading of readings) {
    const minute = Math.floor(reading.at / 60);
    minutes.set(minute, [...(minutes.get(minute) ?? []), reading]);
  }
  return [...minutes].map(([minute, list]) => ({
    minute, cpu: mean(list.map(({ cpu }) => cpu)), memoryMiB: mean(list.map(({ memoryMiB }) => memoryMiB)), openFiles: mean(list.map(({ openFiles }) => openFiles)),
  }));
}

/** The figures of each process between `from` (the warm-up's end) and `to` (the load's end), in seconds of the run. */
export function growthOf(sampled: readonly Sampled[], from: number, to: number): Growth[] {
  const middle = (from + to) / 2;
  return sampled.map(({ name, kind, readings }) => {
    const during = readings.filter(({ at }) => at >= from && at <= to);
    const halves = [during.filter(({ at }) => at < middle), during.filter(({ at }) => at >= middle)];
    const means = (field: 'memoryMiB' | 'openFiles') => halves.map((half) => mean(half.map((reading) => reading[field]))) as [number, number];
    return {
      name, kind,
      cpu: mean(during.map(({ cpu }) => cpu)),
      memoryMiB: means('memoryMiB'),
      openFiles: means('openFiles'),
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
