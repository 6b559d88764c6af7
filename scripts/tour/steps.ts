import { StepFailed } from './failures';

// The runner: areas of steps, one line each.

export const AREAS = ['identity', 'rbac', 'billing', 'modules', 'data', 'files', 'money', 'events', 'integrations', 'audit', 'jobs', 'health'] as const;
export type Area = (typeof AREAS)[number];

export interface StepResult {
  area: Area;
  name: string;
  outcome: 'passed' | 'failed' | 'skipped';
  ms: number;
  /** The answer's summary when passed, what went wrong otherwise. */
  detail: string;
}

type Write = (line: string) => void;

export class Tour {
  readonly results: StepResult[] = [];

  constructor(private readonly write: Write) {}

  /**
   * Runs an area's steps in order. A step that fails ends the area (what follows it needs what it
   * made); an area whose prerequisite is missing is one skipped line.
   */
  async area(area: Area, missing: string | null, body: (step: StepFn) => Promise<void>): Promise<boolean> {
    if (missing) {
      this.results.push({ area, name: '(area)', outcome: 'skipped', ms: 0, detail: missing });
      this.write(`- ${area}: skipped, ${missing}`);
      return false;
    }
    const failedBefore = this.failed();
    try {
      await body(async (name, run) => {
        const started = performance.now();
        try {
          const detail = await run();
          const ms = Math.round(performance.now() - started);
          this.results.push({ area, name, outcome: 'passed', ms, detail });
          this.write(`✓ ${area}: ${name} → ${detail} (${ms} ms)`);
        } catch (error) {
          const ms = Math.round(performance.now() - started);
          const detail = error instanceof StepFailed ? error.message : `unexpected error: ${error instanceof Error ? error.stack ?? error.message : String(error)}`;
          this.results.push({ area, name, outcome: 'failed', ms, detail });
          this.write(`✗ ${area}: ${name} → ${detail} (${ms} ms)`);
          throw new AreaStopped();
        }
      });
    } catch (error) {
      if (!(error instanceof AreaStopped)) throw error;
    }
    return this.failed() === failedBefore;
  }

  private failed(): number {
    return this.results.filter((result) => result.outcome === 'failed').length;
  }
}

// Thrown by a failed step to leave its area's body; the runner catches it and goes on to the next area.
class AreaStopped extends Error {}

export type StepFn = (name: string, run: () => Promise<string>) => Promise<void>;
