/**
 * Readiness (docs/reference/gateway.md#rule-21): 503 while any of three things is missing: the feature-flag cache is
 * loaded, the connections to the core services are established, the route configuration is
 * synced. Each is a named condition; the unmet ones make up the reason given.
 */
export interface ReadinessCondition {
  name: string;
  met(): boolean;
  /** Said when the condition is not met. */
  reason: string;
}

export type Readiness = { ready: true } | { ready: false; reason: string };

export function evaluateReadiness(conditions: readonly ReadinessCondition[]): Readiness {
  const unmet = conditions.filter((condition) => !condition.met());
  if (unmet.length === 0) return { ready: true };
  return { ready: false, reason: unmet.map((condition) => condition.reason).join('; ') };
}
