import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CircuitBreakers, CircuitState } from '../resilience/circuit-breaker';
import type { TenantBreakers } from '../resilience/tenant-breaker';
import { matchedRoute, type AppMiddleware } from '../context';

const STATE_VALUE: Record<CircuitState, number> = { closed: 0, 'half-open': 1, open: 2 };

/**
 * The gateway's caches that trust PostgreSQL's announcements (the permission cache, the /auth/me
 * answers): their lookups so far, and whether the connection that hears the announcements listens
 * (while it does not, both read on every request, which is the first thing to look at when they slow down).
 */
export interface AnnouncedCaches {
  lookups: Readonly<Record<string, { readonly hits: number; readonly misses: number }>>;
  isListening(): boolean;
}

/**
 * The gateway's Prometheus metrics, on a registry of its own (not prom-client's global one), so
 * two gateways in one test process do not share counters. Route labels are the route's pattern,
 * never the raw path, so ids in paths cannot explode the label space.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route'>;
  private readonly rejections: Counter<'group'>;

  constructor(breakers: CircuitBreakers, tenants: TenantBreakers, caches: AnnouncedCaches) {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'http_requests_total', help: 'Requests answered, by route pattern and status',
      labelNames: ['method', 'route', 'status'], registers: [this.registry],
    });
    this.latency = new Histogram({
      name: 'http_request_duration_seconds', help: 'Time from the first byte read to the response, by route pattern',
      labelNames: ['method', 'route'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    this.rejections = new Counter({
      name: 'rate_limit_rejections_total', help: 'Requests refused with 429 by the gateway rate limit, by group key kind (money-in-flight: a tenant at its bound of money operations in flight)',
      labelNames: ['group'], registers: [this.registry],
    });
    new Gauge({
      name: 'circuit_breaker_state', help: 'Downstream circuit breaker state: 0 closed, 1 half-open, 2 open',
      labelNames: ['downstream'], registers: [this.registry],
      collect() {
        for (const [downstream, state] of Object.entries(breakers.states())) this.set({ downstream }, STATE_VALUE[state]);
      },
    });
    new Counter({
      name: 'gateway_cache_lookups_total', help: 'Lookups in the caches checked against announcements, by cache and hit or miss',
      labelNames: ['cache', 'result'], registers: [this.registry],
      collect() {
        this.reset();
        for (const [cache, { hits, misses }] of Object.entries(caches.lookups)) {
          this.inc({ cache, result: 'hit' }, hits);
          this.inc({ cache, result: 'miss' }, misses);
        }
      },
    });
    new Gauge({
      name: 'gateway_announcements_listening', help: '1 while the gateway hears PostgreSQL announce RBAC and account changes, else 0',
      registers: [this.registry],
      collect() {
        this.set(caches.isListening() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'tenant_breaker_isolated_tenants', help: 'Tenants answered 503 by the per-tenant breaker right now',
      registers: [this.registry],
      collect() {
        this.set(tenants.isolatedCount());
      },
    });
  }

  /** Outermost but one (inside the request context): times every request, errors included. */
  middleware(): AppMiddleware {
    return async (ctx, next) => {
      const stop = this.latency.startTimer();
      try {
        await next();
      } finally {
        const route = matchedRoute(ctx) ?? 'unmatched';
        this.requests.inc({ method: ctx.method, route, status: ctx.status });
        stop({ method: ctx.method, route });
      }
    };
  }

  rateLimited(group: string): void {
    this.rejections.inc({ group });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
