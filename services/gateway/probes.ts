/**
 * What the gateway's readiness, /health and /metrics read of PostgreSQL itself, beside any domain:
 * the cheapest round trip, whether the reporting connection is read-only, and the fleet-wide
 * operations backlogs (migration 0037). The gateway reaches PostgreSQL only through services/
 * (docs/decisions/layout.md); these reads need no rule of their own, so the service is their name.
 */
export { isReadOnlyConnection, pingDatabase } from '../../db/queries/gateway/health.queries';
export { selectOperationsBacklogs as operationsBacklogs, type Backlog, type OperationsBacklogs } from '../../db/queries/gateway/backlogs.queries';
