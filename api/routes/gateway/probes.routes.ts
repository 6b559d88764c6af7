import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { AppState } from '../../context';
import type { Liveness } from '../../health/event-loop';
import type { Readiness } from '../../health/readiness';
import { HTTP_STATUS, type HealthReport } from '../../health/report';

export interface Probes {
  liveness(): Liveness;
  readiness(): Readiness;
  health(): Promise<HealthReport>;
}

/**
 * The probes (docs/reference/gateway.md#resources) at the root of the host. /live and /ready are open to the orchestrator;
 * /health names every dependency and its errors, so it is behind `healthGuard` (the admin role). None is
 * cached: every answer is `Cache-Control: no-store` (api/middleware/security-headers.ts).
 */
export function mountProbes(router: Router<AppState>, probes: Probes, healthGuard: readonly Middleware<AppState>[]): void {
  router.get('/live', (ctx) => {
    const liveness = probes.liveness();
    ctx.status = liveness.alive ? 200 : 503;
    ctx.body = liveness.alive ? { status: 'ok' } : { status: 'error', reason: liveness.reason };
  });

  router.get('/ready', (ctx) => {
    const readiness = probes.readiness();
    ctx.status = readiness.ready ? 200 : 503;
    ctx.body = readiness.ready ? { status: 'ready' } : { status: 'not_ready', reason: readiness.reason };
  });

  router.get('/health', ...healthGuard, async (ctx) => {
    const report = await probes.health();
    ctx.status = HTTP_STATUS[report.status];
    ctx.body = report;
  });
}
