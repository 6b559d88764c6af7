/**
 * The /health answer of docs/reference/gateway.md#rule-22: eight components, each healthy, degraded or unhealthy with
 * its latency and error, rolled up into one status and HTTP code.
 */
export const COMPONENTS = [
  'relational_db', 'analytics_db', 'event_broker', 'task_queue', 'cache', 'object_storage', 'feature_flags', 'proxy',
] as const;
export type ComponentName = (typeof COMPONENTS)[number];

export type HealthStatus = 'healthy' | 'degraded' | 'unhealthy';

export interface ComponentStatus {
  status: HealthStatus;
  /** Integer milliseconds; null when the component could not be reached. */
  latencyMs: number | null;
  /** Why the component is not healthy; null when it is. */
  error: string | null;
}

export interface HealthReport {
  status: HealthStatus;
  version: string;
  uptime: string;
  components: Record<ComponentName, ComponentStatus>;
}

/** healthy only if all are; unhealthy if any is; otherwise degraded. */
export function overallStatus(statuses: readonly HealthStatus[]): HealthStatus {
  if (statuses.includes('unhealthy')) return 'unhealthy';
  if (statuses.includes('degraded')) return 'degraded';
  return 'healthy';
}

export const HTTP_STATUS: Record<HealthStatus, number> = { healthy: 200, degraded: 207, unhealthy: 503 };

/** Go-style duration: `3s`, `2m3s`, `1h2m3s` (hours are not folded into days). */
export function formatUptime(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
