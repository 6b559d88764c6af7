import { monitorEventLoopDelay, type ELDHistogram } from 'node:perf_hooks';

export type Liveness = { alive: true } | { alive: false; reason: string };

/**
 * Liveness is about the process itself (docs/reference/gateway.md#rule-20: a failing /live means a defect, not a
 * dependency outage). The defect we can see from inside is a blocked event loop: code that
 * spins or does heavy synchronous work. The loop's delay is sampled continuously; /live fails
 * while the longest delay of the current or the previous window exceeds the threshold, so a
 * stall is still reported on the first probe that gets through after it.
 */
export class EventLoopMonitor {
  private readonly histogram: ELDHistogram = monitorEventLoopDelay({ resolution: 20 });
  private previousWindowMaxMs = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly maxDelayMs: number, private readonly windowMs = 10_000) {}

  start(): void {
    this.histogram.enable();
    this.timer = setInterval(() => {
      this.previousWindowMaxMs = this.currentMaxMs();
      this.histogram.reset();
    }, this.windowMs);
    this.timer.unref();
  }

  /**
   * Start-up blocks the loop on purpose: building the routes, their validators and OpenAPI
   * documents takes about 0.4 s of synchronous work on an idle machine and several seconds on a
   * busy one. That is readiness's business (/ready fails until start-up is done), not a defect of
   * a running process, so its stalls are forgotten once start-up ends.
   */
  forgetStartup(): void {
    this.previousWindowMaxMs = 0;
    this.histogram.reset();
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }

  liveness(): Liveness {
    const worstMs = Math.max(this.previousWindowMaxMs, this.currentMaxMs());
    if (worstMs <= this.maxDelayMs) return { alive: true };
    return { alive: false, reason: `event loop blocked for ${Math.round(worstMs)} ms (limit ${this.maxDelayMs} ms)` };
  }

  private currentMaxMs(): number {
    // The histogram reports nanoseconds; before its first sample it reports a huge sentinel max.
    return this.histogram.count > 0 ? this.histogram.max / 1e6 : 0;
  }
}
