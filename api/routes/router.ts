import Router, { type Layer } from '@koa/router';
import type { Middleware } from 'koa';
import { problems } from '../../common/problems';
import type { AppState } from '../context';
import { bodyGuard, rawBodyGuard } from '../middleware/body-guard';
import { validationGuard } from '../middleware/validation-guard';
import { rateLimitGroupOf, type AnyRoute, type RateLimitGroup, type RouteModule, type RouteRegistry } from '../http/route-registry';
import { mostSpecific, shadowedWhen } from '../http/route-patterns';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

export interface ApiRouterOptions {
  bodyLimitBytes: number;
  validateResponses: boolean;
  /** Put in front of every route declared `auth: 'bearer'`. */
  authenticate: Middleware<AppState>;
  /**
   * Put right after authentication on every bearer route not declared `allowedBeforeMfa`, when
   * REQUIRE_MFA_FOR_ADMINS is on (403 mfa-enrollment-required); absent when it is off.
   */
  requireMfa?: Middleware<AppState>;
  /** Put after authentication, before authorization, on every route that declares a module (404 module-not-found). */
  requireModule(module: RouteModule): Middleware<AppState>;
  /** Put after authentication on every route that declares a permission. */
  authorize(permission: string): Middleware<AppState>;
  /** Put after authorization on every route that declares a step-up (a recent sign-in). */
  stepUp(step: NonNullable<AnyRoute['stepUp']>): Middleware<AppState>;
  /** Plan and subscription checks of a bearer route (docs/reference/gateway.md#rule-8); none when billing is off. */
  billing?(route: AnyRoute): Middleware<AppState> | undefined;
  /** Charges the request to its group's rate limit; after authorization, before the body is read. */
  rateLimit(group: RateLimitGroup): Middleware<AppState>;
  /** Runs the route's handler as a call to its downstream service (deadline, retry, breakers). */
  call(route: AnyRoute): Middleware<AppState>;
}

function rateLimitsOf(route: AnyRoute, options: ApiRouterOptions): Middleware<AppState>[] {
  const group = rateLimitGroupOf(route);
  return group ? [options.rateLimit(group)] : [];
}

function billingStepOf(route: AnyRoute, options: ApiRouterOptions): Middleware<AppState>[] {
  const step = route.auth === 'bearer' ? options.billing?.(route) : undefined;
  return step ? [step] : [];
}

/**
 * A route whose pattern a more specific one shadows (`GET /wallets/:id` by `/wallets/transfer`) does
 * not serve the shadowed paths: the router would hand it `id = transfer`, but the path belongs to
 * the other pattern, so a method that pattern does not serve is 405 with its `Allow`, as the
 * fallback answers (api/http/route-patterns.ts). Only shadowed routes get this step.
 */
/** As the router lists a route's methods: a GET route answers HEAD too. */
const methodsOf = (method: string): string[] => (method === 'GET' ? ['HEAD', 'GET'] : [method]);

function shadowStepOf(route: AnyRoute, routes: readonly AnyRoute[]): Middleware<AppState>[] {
  const shadows = routes.flatMap((other) => {
    const when = other.method === route.method ? null : shadowedWhen(route.path, other.path);
    return when ? [{ path: other.path, method: other.method, when }] : [];
  });
  if (shadows.length === 0) return [];
  return [async (ctx, next) => {
    const params = (ctx as unknown as { params: Record<string, string> }).params;
    const applying = mostSpecific(shadows.filter((shadow) => shadow.when.every(([name, literal]) => params[name] === literal)), (shadow) => shadow.path);
    if (applying.length > 0) throw problems.methodNotAllowed(ctx.method, [...new Set(applying.flatMap((shadow) => methodsOf(shadow.method)))]);
    await next();
  }];
}

/** The versioned API's routes: the middleware serving them, and which of them a path matches. */
export interface ApiRoutes {
  routes: Middleware<AppState>;
  /** Every route whose pattern matches `path`, whatever its method (the fallback's 404 and 405). */
  matching(path: string): Layer<AppState>[];
}

/**
 * The API's routes under each of `prefixes` (/v1 and its alias /api/v1), as one router per prefix
 * and first path segment (`/v1/events`, `/api/v1/wallets`); a request goes to the router its path
 * names. @koa/router tests every route's pattern in turn, and one router of every route under both
 * prefixes was about 250 regular expressions per request: a REST publish costs the gateway 0.08–0.11 ms
 * of CPU less without them (measured side by side, docs/decisions/gateway.md).
 * No route's first segment is a parameter (RouteRegistry refuses one), so every path has one router
 * whose routes are all that could match it, and a route's shadows (shadowStepOf) share its first segment.
 */
export function buildApiRouter(registry: RouteRegistry, prefixes: readonly string[], options: ApiRouterOptions): ApiRoutes {
  const bySegment = new Map<string, AnyRoute[]>();
  for (const route of registry.routes) {
    const segment = firstSegmentOf(route.path);
    bySegment.set(segment, [...bySegment.get(segment) ?? [], route]);
  }
  const bodies: BodyGuards = { json: bodyGuard(options.bodyLimitBytes), raw: rawBodyGuard(options.bodyLimitBytes) };
  const routers = new Map<string, Router<AppState>>();
  for (const [segment, routes] of bySegment) {
    const stacks = routes.map((route) => [route, routeStack(route, routes, options, bodies)] as const);
    for (const prefix of prefixes) {
      const router = new Router<AppState>({ prefix });
      for (const [route, stack] of stacks) router.register(route.path, [route.method], stack, { name: route.operationId });
      routers.set(`${prefix}/${segment}`, router);
    }
  }
  const middlewares = new Map([...routers].map(([key, router]) => [key, router.routes()]));
  // The router matches paths regardless of case (its default), so the key is found the same way.
  const routerOf = (path: string) => {
    const lower = path.toLowerCase();
    const prefix = prefixes.find((candidate) => lower.startsWith(`${candidate}/`));
    return prefix === undefined ? undefined : `${prefix}/${firstSegmentOf(lower.slice(prefix.length))}`;
  };
  return {
    routes: async (ctx, next) => {
      const key = routerOf(ctx.path);
      const routes = key === undefined ? undefined : middlewares.get(key);
      // A router's middleware takes the context its routes will see (params added by the router itself).
      if (routes) await routes(ctx as Parameters<typeof routes>[0], next);
      else await next();
    },
    matching: (path) => {
      const key = routerOf(path);
      const router = key === undefined ? undefined : routers.get(key);
      return router ? router.match(path, 'GET').path : [];
    },
  };
}

/** `events` of `/events/publish`. */
function firstSegmentOf(path: string): string {
  return path.split('/')[1];
}

/** The body guards every route with the default limit shares. */
interface BodyGuards {
  json: Middleware<AppState>;
  raw: Middleware<AppState>;
}

/**
 * A route's middleware, in the order of docs/reference/gateway.md#rule-5: authentication (unless it is public), the
 * two-factor enrolment an administrator may owe (REQUIRE_MFA_FOR_ADMINS; before anything else, so such a
 * caller learns nothing a route would tell), the module-installed check (when it declares a module), authorization (when it declares a permission),
 * the step-up (when it declares one: after the permission, since signing in again cannot give a
 * caller a permission it lacks), its rate limit, the body guard (for methods that carry a body), its validation guard and the call
 * of its handler (deadline, retry, breakers). Authentication comes first, so an anonymous caller
 * learns nothing about a body's validity.
 */
function routeStack(route: AnyRoute, neighbours: readonly AnyRoute[], options: ApiRouterOptions, bodies: BodyGuards): Middleware<AppState>[] {
  return [
    ...shadowStepOf(route, neighbours),
    ...(route.auth === 'bearer' ? [options.authenticate] : []),
    ...(route.auth === 'bearer' && !route.allowedBeforeMfa && options.requireMfa ? [options.requireMfa] : []),
    ...(route.module ? [options.requireModule(route.module)] : []),
    ...(route.permission ? [options.authorize(route.permission)] : []),
    ...(route.stepUp ? [options.stepUp(route.stepUp)] : []),
    ...billingStepOf(route, options),
    ...rateLimitsOf(route, options),
    ...(BODY_METHODS.has(route.method) && !route.streamedBody
      ? [route.rawBody ? bodies.raw : route.bodyLimitBytes ? bodyGuard(route.bodyLimitBytes) : bodies.json] : []),
    validationGuard(route, options.validateResponses),
    options.call(route),
  ];
}
