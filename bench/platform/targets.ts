import { figure, reported, type TargetResult } from '../lib/results';
import type { Backlog } from './drain';
import { grew, GROWTH_TOLERANCE, type Growth } from './soak';

/** Shorter runs show that the bench runs and the platform drains; a soak's growth needs minutes of steady state to read. */
export const SOAK_MINUTES = 10;

/** What bench/results/platform.json holds that the targets read (the file bench/platform.bench.ts writes). */
export interface PlatformRun {
  options: { minutes: number };
  families: ReadonlyArray<{ answered: number; errors: Record<string, number>; rateLimited: number }>;
  shed: number;
  processes: readonly Growth[];
  drained: { backlogs: readonly Backlog[]; seconds: number };
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
const change = ([first, last]: [number, number]) => {
  const percent = Math.round(((last - first) / first) * 100);
  return percent > 0 ? `+${percent} %` : percent < 0 ? `−${-percent} %` : '0 %';
};

/**
 * Issue 36's targets (docs/performance/platform.md), judged from a run's figures: by the bench when it
 * writes its run, and by scripts/performance-docs.ts for a run written before runs carried their targets.
 */
export function platformTargets(run: PlatformRun): TargetResult[] {
  const errors = sum(run.families.flatMap((family) => Object.values(family.errors)));
  const rateLimited = sum(run.families.map((family) => family.rateLimited));
  const answered = sum(run.families.map((family) => family.answered));
  const left = run.drained.backlogs.filter(({ waiting }) => waiting > 0).length;
  const restarted = run.processes.filter((process) => process.restarts > 0);
  const applications = [...run.processes.filter((process) => process.kind === 'application')].sort((a, b) => a.name.localeCompare(b.name));
  const soak = run.options.minutes >= SOAK_MINUTES;
  const growth = (field: 'memoryMiB' | 'openFiles', target: string): TargetResult => {
    const latest = applications.map((process) => `${process.name} ${change(process[field])}`
      + (grew(process[field]) ? ` (${process[field][0].toFixed(0)} → ${process[field][1].toFixed(0)})` : '')).join(', ');
    if (!soak) return reported(target, `${latest} (judged in runs of ${SOAK_MINUTES} minutes or more)`);
    return { target, latest, met: !applications.some((process) => grew(process[field])) };
  };
  const tolerance = `${Math.round(GROWTH_TOLERANCE * 100)} %`;
  return [
    {
      target: 'every request of the mix served, errors by type reported (issue 36)',
      latest: `${figure(answered)} answered, ${errors} errors, ${rateLimited} answered 429, ${run.shed} shed`,
      met: errors === 0 && rateLimited === 0 && run.shed === 0,
    },
    {
      target: 'Kafka consumer lag, Temporal task-queue backlogs and the outbox back to zero after the load (issue 36)',
      latest: `${run.drained.backlogs.length} backlogs, ${left === 0 ? 'all at zero' : `${left} not at zero`} ${run.drained.seconds.toFixed(1)} s after the load`,
      met: left === 0,
    },
    { target: 'no process restarted (issue 36)', latest: restarted.length === 0 ? 'none' : restarted.map((process) => `${process.name} ×${process.restarts}`).join(', '), met: restarted.length === 0 },
    growth('memoryMiB', `memory (MiB) of the application's processes within ${tolerance} after the warm-up (issue 36)`),
    growth('openFiles', `open files of the application's processes within ${tolerance} after the warm-up (issue 36)`),
  ];
}
