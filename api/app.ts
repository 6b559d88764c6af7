import Router from '@koa/router';
import Koa from 'koa';
import type { Config } from '../common/config';
import type { TokenService } from '../services/identity/tokens';
import type { Logger } from '../common/logger';
import type { AppState } from './context';
import { mountProbes, type Probes } from './routes/gateway/probes.routes';
import { evaluateReadiness, type ReadinessCondition } from './health/readiness';
import { mountJwks } from './routes/identity/jwks.routes';
import type { PermissionResolver } from './runtime/permission-resolver';
import type { SlidingWindowLimiter } from './runtime/rate-limiter';
import type { RequestAuditor } from './middleware/request-audit';
import type { GatewayMetrics } from './metrics/gateway-metrics';
import { authenticate } from './middleware/authenticate';
import { VerifiedTokens } from './runtime/verified-tokens';
import type { SessionRevocations } from './runtime/session-revocations';
import type { VerifiedApiKeys } from './runtime/verified-api-keys';
import { authorize, requireAdminRole } from './middleware/authorize';
import type { InstalledModules } from './runtime/installed-modules';
import { requireModule } from './middleware/require-module';
import { stepUp } from './middleware/step-up';
import { requireMfaEnrollment } from './middleware/mfa-enrollment';
import { rateLimit } from './middleware/rate-limit';
import type { LimitEnforcement } from './middleware/billing-enforcement';
import type { CircuitBreakers } from './resilience/circuit-breaker';
import { downstreamCall } from './resilience/downstream-call';
import type { TenantBreakers } from './resilience/tenant-breaker';
import { clientIp } from './middleware/client-ip';
import { problemHandler } from './middleware/problem-handler';
import { requestContext } from './middleware/request-context';
import { securityHeaders } from './middleware/security-headers';
import { routeFallback } from './middleware/route-fallback';
import { buildOpenApiDocuments } from './openapi/document';
import { mountDocs } from './routes/gateway/docs.routes';
import { RouteRegistry, type AnyRoute } from './http/route-registry';
import { buildApiRouter } from './routes/router';

export interface AppDeps {
  config: Readonly<Config>;
  logger: Logger;
  routes: readonly AnyRoute[];
  /** Verifies the bearer token of every route not declared public, and publishes the JWKS. */
  tokens: TokenService;
  /** The ended sessions, whose access tokens are refused although their signature holds. */
  revocations: SessionRevocations;
  /** The API keys this gateway has verified, dropped when PostgreSQL announces a revocation. */
  apiKeys: VerifiedApiKeys;
  /** Checks the permission a route declares, per request. */
  permissions: PermissionResolver;
  /** Answers whether a route's module is installed and active for the caller's tenant. */
  installedModules: InstalledModules;
  /** Counts every API request against its route's rate-limit group. */
  limiter: SlidingWindowLimiter;
  /** Served at /metrics. */
  metrics: GatewayMetrics;
  /** Writes audit.api.called for every authenticated request, after its response. */
  requestAudit: RequestAuditor;
  /** One breaker per downstream service (the route namespaces) and one per tenant. */
  breakers: CircuitBreakers;
  tenantBreakers: TenantBreakers;
  /** Plan and subscription checks of bearer routes (docs/reference/gateway.md#rule-8); absent or null when billing is off. */
  limits?: LimitEnforcement | null;
  liveness: Probes['liveness'];
  /** Start-up conditions beyond the routes (flags loaded, core connections established). */
  readiness: readonly ReadinessCondition[];
  health: Probes['health'];
}

/** The versioned API's base and its alias, both serving every route (the OpenAPI documents' two servers). */
const API_PREFIXES = ['/v1', '/api/v1'];

/**
 * The gateway as a Koa application, without listening (server.ts listens; tests call its
 * callback). The route registry, the router and the OpenAPI documents are built here, in that
 * order, before the app can answer; a broken route definition throws here.
 */
export function createApp(deps: AppDeps): Koa<AppState> {
  const { config, logger } = deps;
  let routesSynced = false;

  const registry = new RouteRegistry(deps.routes);
  const documents = buildOpenApiDocuments(registry, config.version);
  const bearer = authenticate(new VerifiedTokens(deps.tokens, config.api.verifiedTokenCacheSize), deps.revocations, deps.apiKeys);
  const requireMfa = config.identity.requireMfaForAdmins ? requireMfaEnrollment(deps.permissions) : undefined;
  const api = buildApiRouter(registry, API_PREFIXES, {
    bodyLimitBytes: config.api.bodyLimitBytes,
    validateResponses: config.api.validateResponses,
    authenticate: bearer,
    requireMfa,
    requireModule: (module) => requireModule(deps.installedModules, module),
    authorize: (permission) => authorize(deps.permissions, permission),
    stepUp: (step) => stepUp(step, config.identity.ttl.stepUpMaxAge),
    billing: deps.limits ? (route) => deps.limits!.step(route) : undefined,
    rateLimit: (group) => rateLimit(group, {
      limiter: deps.limiter, settings: config.rateLimit, onRejected: (rejected) => deps.metrics.rateLimited(rejected),
    }),
    call: (route) => downstreamCall(route, {
      breakers: deps.breakers, tenants: deps.tenantBreakers,
      timeoutMs: config.api.downstreamTimeoutMs, retryDelayMs: config.resilience.getRetryDelayMs,
    }),
  });

  const root = new Router<AppState>();
  mountProbes(root, {
    liveness: deps.liveness,
    readiness: () => evaluateReadiness([
      ...deps.readiness,
      { name: 'routes', met: () => routesSynced, reason: 'route configuration not synced' },
    ]),
    health: deps.health,
  }, [bearer, ...(requireMfa ? [requireMfa] : []), requireAdminRole()]);
  mountDocs(root, documents);
  root.get('/metrics', async (ctx) => {
    ctx.set('Content-Type', deps.metrics.registry.contentType);
    ctx.body = await deps.metrics.render();
  });
  mountJwks(root, deps.tokens);

  // app.proxy stays off: Koa would believe X-Forwarded-* from any peer. The client address is decided
  // first, from TRUSTED_PROXIES only, before the audit and the rate limit read ctx.ip (docs/decisions/gateway.md).
  const app = new Koa<AppState>();
  app.use(clientIp(config.api.trustedProxies));
  app.use(requestContext(logger));
  app.use(securityHeaders());
  app.use(deps.metrics.middleware());
  app.use(deps.requestAudit.middleware());
  app.use(problemHandler(config.api.problemBase));
  app.use(root.routes());
  app.use(api.routes);
  app.use(routeFallback((path) => [...root.match(path, 'GET').path, ...api.matching(path)]));
  // Errors are answered by problemHandler; what reaches Koa's own handler broke after the headers left.
  app.on('error', (error: unknown) => logger.error({ err: error }, 'response failed after headers were sent'));

  routesSynced = true;
  return app;
}
