import type { CircuitBreakers } from '../resilience/circuit-breaker';
import { proxyStatus, type ComponentChecks } from './components';
import { COMPONENTS, formatUptime, overallStatus, type ComponentName, type ComponentStatus, type HealthReport } from './report';

/**
 * Runs the component checks in parallel, then reads the breakers (which those checks just
 * exercised) for `proxy`. Concurrent /health requests share one run, so a burst of probes does
 * not become a burst of calls to every service.
 */
export function createHealthReporter(checks: ComponentChecks, breakers: CircuitBreakers, version: string): () => Promise<HealthReport> {
  let inFlight: Promise<HealthReport> | undefined;

  async function run(): Promise<HealthReport> {
    const found = await Promise.all(Object.entries(checks).map(async ([name, check]) => [name, await check()] as const));
    const byName = new Map<string, ComponentStatus>([...found, ['proxy', proxyStatus(breakers)]]);
    const components = Object.fromEntries(COMPONENTS.map((name) => [name, byName.get(name)])) as Record<ComponentName, ComponentStatus>;
    return {
      status: overallStatus(Object.values(components).map((component) => component.status)),
      version,
      uptime: formatUptime(process.uptime()),
      components,
    };
  }

  return () => {
    inFlight ??= run().finally(() => { inFlight = undefined; });
    return inFlight;
  };
}
