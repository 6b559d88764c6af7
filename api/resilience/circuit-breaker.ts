/**
 * The gateway's circuit breaker (docs/reference/gateway.md#rule-14): 5 consecutive failures
 * within 30 s open the circuit for 30 s, during which calls fail at once without reaching the
 * service. For the way out of open we follow the common rule: after
 * the open period the circuit is half-open and lets exactly one probe call through; its success
 * closes the circuit, its failure opens it for another period. Calls that arrive while the probe
 * is in flight are refused like calls on an open circuit.
 */
export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** Consecutive failures that open the circuit. */
  failureThreshold?: number;
  /** Failures older than this no longer count towards the threshold. */
  failureWindowMs?: number;
  /** How long the circuit stays open before it lets a probe through. */
  openMs?: number;
  /** Injected clock, so tests move time without waiting. */
  now?: () => number;
}

export class CircuitOpenError extends Error {
  constructor(readonly downstream: string) {
    super(`${downstream} is unavailable (circuit open)`);
    this.name = 'CircuitOpenError';
  }
}

export class CircuitBreaker {
  private readonly failureThreshold: number;
  private readonly failureWindowMs: number;
  private readonly openMs: number;
  private readonly now: () => number;
  /** Times of the current run of consecutive failures, oldest first. */
  private failures: number[] = [];
  private openUntil: number | null = null;
  private probeInFlight = false;

  constructor(readonly name: string, options: CircuitBreakerOptions = {}) {
    this.failureThreshold = options.failureThreshold ?? 5;
    this.failureWindowMs = options.failureWindowMs ?? 30_000;
    this.openMs = options.openMs ?? 30_000;
    this.now = options.now ?? Date.now;
  }

  /** Open turns into half-open by the passing of time alone, so the state is computed on read. */
  get state(): CircuitState {
    if (this.openUntil === null) return 'closed';
    return this.now() < this.openUntil ? 'open' : 'half-open';
  }

  /**
   * Runs the call through the breaker. A failure for which `countsAsFailure` says false tells
   * nothing of the downstream's health (a deadline one tenant's burst made it miss): it neither adds
   * to the run of failures nor ends it, and a probe that meets one leaves the circuit half-open.
   */
  async execute<T>(call: () => Promise<T>, countsAsFailure: (error: unknown) => boolean = () => true): Promise<T> {
    const state = this.state;
    if (state === 'open' || (state === 'half-open' && this.probeInFlight)) {
      throw new CircuitOpenError(this.name);
    }
    const isProbe = state === 'half-open';
    if (isProbe) this.probeInFlight = true;
    try {
      const result = await call();
      this.onSuccess();
      return result;
    } catch (error) {
      if (countsAsFailure(error)) this.onFailure(isProbe);
      throw error;
    } finally {
      if (isProbe) this.probeInFlight = false;
    }
  }

  private onSuccess(): void {
    this.failures = [];
    this.openUntil = null;
  }

  private onFailure(wasProbe: boolean): void {
    const now = this.now();
    if (wasProbe) {
      this.open(now);
      return;
    }
    this.failures = [...this.failures.filter((at) => now - at < this.failureWindowMs), now];
    if (this.failures.length >= this.failureThreshold) this.open(now);
  }

  private open(now: number): void {
    this.openUntil = now + this.openMs;
    this.failures = [];
  }
}

/** One breaker per downstream, created on first use, so the health report can list them all. */
export class CircuitBreakers {
  private readonly breakers = new Map<string, CircuitBreaker>();

  constructor(private readonly options: CircuitBreakerOptions = {}) {}

  for(downstream: string): CircuitBreaker {
    let breaker = this.breakers.get(downstream);
    if (!breaker) {
      breaker = new CircuitBreaker(downstream, this.options);
      this.breakers.set(downstream, breaker);
    }
    return breaker;
  }

  states(): Record<string, CircuitState> {
    return Object.fromEntries([...this.breakers].map(([name, breaker]) => [name, breaker.state]));
  }
}
