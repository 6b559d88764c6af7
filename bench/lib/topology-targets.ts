import { reported, type TargetResult } from './results';

/** One phase of one profile as bench/results/topology.json holds it. */
export interface TopologyRow {
  phase: string;
  perSecond: number;
  p50: number;
  p99: number;
  /** Share of the machine's CPU time that was busy during the phase. */
  busy: number;
}

/**
 * No issue names a target for the two profiles side by side (docs/performance/topology.md): each phase
 * is reported with every profile's rate, latencies and busy share, by the bench when it writes its run
 * and by scripts/performance-docs.ts for a run written before runs carried their targets.
 */
export function topologyTargets(profiles: Readonly<Record<string, readonly TopologyRow[]>>): TargetResult[] {
  const [first = []] = Object.values(profiles);
  return first.map(({ phase }, index) => reported(phase, Object.entries(profiles).map(([profile, rows]) => {
    const { perSecond, p50, p99, busy } = rows[index];
    return `${profile} ${perSecond.toFixed(0)}/s, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, ${(busy * 100).toFixed(0)} % busy`;
  }).join('; ')));
}
