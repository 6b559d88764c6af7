import type Joi from 'joi';
import type { ParameterizedContext } from 'koa';
import type { AppState } from '../context';
import type { RouteBilling } from '../../services/billing/limits';

/**
 * The one list of routes: the router mounts it and the OpenAPI generator documents it, so a
 * route cannot be served without being documented, or documented without being served.
 */
export const NAMESPACES = ['iam', 'data', 'money', 'files', 'notify', 'audit', 'events', 'billing', 'gateway'] as const;
export type Namespace = (typeof NAMESPACES)[number];

/** HEAD and OPTIONS for protocols that define them on their own (the tus uploads, api/routes/files/tus.routes.ts). */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** Whose counter a request is charged to (docs/reference/gateway.md#rule-9: IP, user, tenant or API key). */
export const RATE_LIMIT_GROUPS = ['ip', 'user', 'tenant', 'apiKey'] as const;
export type RateLimitGroup = (typeof RATE_LIMIT_GROUPS)[number];

/**
 * The module a route belongs to: its slug, or, when the module is a path parameter
 * (`/data/:module/...`), a function naming it from the raw path parameters.
 */
export type RouteModule = string | ((params: Record<string, string>) => string);

export interface RouteSchemas<P, Q, B, H> {
  params?: Joi.ObjectSchema<P>;
  query?: Joi.ObjectSchema<Q>;
  /**
   * The request headers the route reads, by their canonical names (`Idempotency-Key`), looked up
   * case-insensitively. Only these are checked and handed over; any other header passes untouched.
   */
  headers?: Joi.ObjectSchema<H>;
  /** A declared body is required; a route without one accepts no fields. */
  body?: Joi.Schema<B>;
  /** Response bodies by status. `null`: no JSON body (204, a redirect, or a binary stream), not validated. */
  response: Record<number, Joi.Schema | null>;
  /** Response headers the document shows by status, one key per header (a list's `Content-Range`); not validated. */
  responseHeaders?: Record<number, Joi.ObjectSchema>;
  /**
   * Statuses whose body is, for some requests, a byte stream (a file download) instead of the
   * declared JSON: the media type the document shows for those bytes (a wildcard where it is the
   * file's own type). A stream or buffer answered with such a status is not validated.
   */
  bytes?: Record<number, string>;
  /**
   * What a response feeds (OpenAPI links), by status: the created wallet's id is the `id` of the
   * operations that read, credit or hold it. A stateful fuzzer follows them to real resources, and
   * client generators show them. Every target is an operation of the same document and every
   * parameter one of its own, checked when the documents are built (api/openapi/document.ts).
   */
  links?: Record<number, ResponseLinks>;
}

/**
 * Target operationId → its parameters (path, query or header, by name) and body fields, each an
 * OpenAPI runtime expression (`$response.body#/id`). Body fields are the fields the link fills in
 * a body whose other fields are the client's (a transfer's `fromWalletId`), as Schemathesis merges them.
 */
export type ResponseLinks = Record<string, { parameters?: Record<string, string>; requestBody?: Record<string, string> }>;

/**
 * The common link: a value of the response (its `id` by default) is the `parameter` of each target.
 * `links: { 201: feeds(['money.wallets.get', 'money.wallets.credit']) }`.
 */
export function feeds(operationIds: readonly string[], { parameter = 'id', from = '$response.body#/id' } = {}): ResponseLinks {
  return Object.fromEntries(operationIds.map((operationId) => [operationId, { parameters: { [parameter]: from } }]));
}

/** A request body the handler reads from the request stream itself (RouteDefinition.streamedBody). */
export interface StreamedBody {
  /** The media type the document gives the body: `multipart/form-data`, `application/offset+octet-stream`. */
  mediaType: string;
  /** The body's parts (or its bytes: `Joi.binary()`) as the document shows them; the handler checks them as they arrive. */
  schema: Joi.Schema;
}

/** The validated (and defaulted) request parts, as the guard hands them to the handler. */
export interface Guard<P, Q, B, H> {
  params: P;
  query: Q;
  body: B;
  headers: H;
}

export type RouteContext<P = unknown, Q = unknown, B = unknown, H = unknown> = ParameterizedContext<AppState, { guard: Guard<P, Q, B, H> }>;

export interface RouteDefinition<P = unknown, Q = unknown, B = unknown, H = unknown> {
  namespace: Namespace;
  method: HttpMethod;
  /** Relative to /v1 (also served under /api/v1), in @koa/router syntax: `/wallets/:walletId`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** Public routes need no bearer token (docs/reference/gateway.md#rule-1). */
  auth: 'public' | 'bearer';
  /** The permission a bearer route requires (docs/reference/gateway.md#rule-7); checked after authentication. */
  permission?: string;
  /**
   * The module the route belongs to: 404 module-not-found unless it is installed and active for the
   * caller's tenant, checked after authentication and before the permission (docs/reference/gateway.md#rule-5).
   */
  module?: RouteModule;
  /**
   * A high-value action (docs/reference/identity.md#rule-46): the caller's sign-in must be at most
   * STEP_UP_MAX_AGE_SECONDS old (the token's `auth_time`), or the answer is 401
   * reauthentication-required; checked after the permission. `apiKeys`: whether an API key, which has
   * no sign-in, may still call the route ('allowed') or is refused with 403 ('refused').
   */
  stepUp?: { apiKeys: 'allowed' | 'refused' };
  /**
   * A route a member who must still turn two-factor on may call under REQUIRE_MFA_FOR_ADMINS: the enrolment,
   * the caller's own account, tenants and sessions, logout (docs/reference/identity.md#rule-48). Every other bearer
   * route answers such a caller 403 mfa-enrollment-required.
   */
  allowedBeforeMfa?: true;
  /** A GET with side effects (an OAuth callback spends its state) says false: it is never retried. */
  idempotent?: false;
  /**
   * The body is read as bytes and not parsed (`rawBodyOf(ctx)`), for handlers that must check a
   * signature over exactly what was sent (payment-provider webhooks) before trusting any of it.
   */
  rawBody?: true;
  /**
   * The body is neither read nor parsed before the handler, which reads the request stream itself
   * (`ctx.req`): an upload goes to the object store as it arrives, never held whole, so neither the
   * JSON body limit nor the downstream deadline applies (the transfer takes as long as the client
   * sends; the server's request timeout bounds it). The document shows `schema` under `mediaType`.
   */
  streamedBody?: StreamedBody;
  /**
   * The handler keeps the downstream deadline (GRPC_CALL_TIMEOUT_MS) itself, because what it answers
   * then is not a 504: work that goes on as a job answers 202 with it (docs/decisions/jobs.md; the
   * money workflows, services/money/flow-deadline.ts). downstreamCall does not cut such a handler off.
   */
  ownDeadline?: true;
  /**
   * The JSON body limit of this route when it is not API_BODY_LIMIT_BYTES: a route whose own rule
   * allows a larger field (an event payload of 1 MB) must read the body whole to apply that rule.
   */
  bodyLimitBytes?: number;
  /** The rate-limit group key; default `user` for bearer routes and `ip` for public ones; false: not limited. */
  rateLimit?: RateLimitGroup | false;
  /** Limit enforcement beyond the subscription status checks every bearer route gets (RouteBilling). */
  billing?: RouteBilling;
  schemas: RouteSchemas<P, Q, B, H>;
  /**
   * What the OpenAPI document shows in place of a route whose path parameters name entries of a
   * catalogue (`/data/:module/:model` serves every autoApi model of the manifests): one operation
   * per entry, with its concrete path and its own schemas, built from the same catalogue the
   * handler serves. The route itself is what is mounted and guarded.
   */
  documentedAs?: () => readonly DocumentedOperation[];
  // A method, not a function property, so routes of different shapes fit in one list.
  handler(ctx: RouteContext<P, Q, B, H>): void | Promise<void>;
}

/** One concrete operation of a catalogue-driven route (RouteDefinition.documentedAs). */
export interface DocumentedOperation {
  /** In @koa/router syntax, with the catalogue's parameters filled in: `/data/crm/contacts/:id`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  schemas: RouteSchemas<unknown, unknown, unknown, unknown>;
}

/** A route of any shape, as lists hold them; each route is checked against its own types where defined. */
export type AnyRoute = RouteDefinition;

export function rateLimitGroupOf(route: AnyRoute): RateLimitGroup | false {
  return route.rateLimit ?? (route.auth === 'bearer' ? 'user' : 'ip');
}

/** Identity at run time; it lets TypeScript infer the guard's types from the schemas. */
export function defineRoute<P = Record<string, never>, Q = Record<string, never>, B = undefined, H = Record<string, never>>(
  route: RouteDefinition<P, Q, B, H>,
): RouteDefinition<P, Q, B, H> {
  return route;
}

export class RouteConfigurationError extends Error {}

/** Checks the route list once at start-up, so a broken definition stops the process, not a request. */
export class RouteRegistry {
  readonly routes: readonly AnyRoute[];

  constructor(routes: readonly AnyRoute[]) {
    const seen = new Set<string>();
    const operationIds = new Set<string>();
    for (const route of routes) {
      const where = `${route.method} ${route.path}`;
      if (!NAMESPACES.includes(route.namespace)) throw new RouteConfigurationError(`${where}: unknown namespace ${route.namespace}`);
      if (!route.path.startsWith('/')) throw new RouteConfigurationError(`${where}: path must start with /`);
      // The API router finds a request's routes by their first segment (api/routes/router.ts).
      if (!/^\/[^/:]/.test(route.path)) throw new RouteConfigurationError(`${where}: the first path segment must be literal`);
      if (seen.has(where)) throw new RouteConfigurationError(`${where}: declared twice`);
      if (operationIds.has(route.operationId)) throw new RouteConfigurationError(`${where}: operationId ${route.operationId} reused`);
      if (route.permission !== undefined && route.auth !== 'bearer') throw new RouteConfigurationError(`${where}: a permission needs auth: 'bearer'`);
      if (route.module !== undefined && route.auth !== 'bearer') throw new RouteConfigurationError(`${where}: a module needs auth: 'bearer'`);
      if (route.stepUp !== undefined && route.auth !== 'bearer') throw new RouteConfigurationError(`${where}: a step-up needs auth: 'bearer'`);
      if (route.allowedBeforeMfa && route.auth !== 'bearer') throw new RouteConfigurationError(`${where}: allowedBeforeMfa needs auth: 'bearer'`);
      if (Object.keys(route.schemas.response).length === 0) throw new RouteConfigurationError(`${where}: no response declared`);
      if (route.streamedBody && (route.schemas.body || route.rawBody || !['POST', 'PUT', 'PATCH'].includes(route.method))) {
        throw new RouteConfigurationError(`${where}: a streamed body is the only body of a POST, PUT or PATCH`);
      }
      for (const status of Object.keys(route.schemas.bytes ?? {})) {
        if (!(status in route.schemas.response)) throw new RouteConfigurationError(`${where}: bytes for undeclared status ${status}`);
      }
      for (const status of Object.keys(route.schemas.links ?? {})) {
        if (!(status in route.schemas.response)) throw new RouteConfigurationError(`${where}: links for undeclared status ${status}`);
      }
      checkPathParams(route, where);
      seen.add(where);
      operationIds.add(route.operationId);
    }
    this.routes = Object.freeze([...routes]);
  }

  inNamespace(namespace: Namespace): AnyRoute[] {
    return this.routes.filter((route) => route.namespace === namespace);
  }
}

function pathParamNames(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((match) => match[1]);
}

/** Every `:name` of the path has a params schema key and the other way round. */
function checkPathParams(route: AnyRoute, where: string): void {
  const inPath = pathParamNames(route.path).sort();
  const described = route.schemas.params?.describe() as { keys?: Record<string, unknown> } | undefined;
  const inSchema = Object.keys(described?.keys ?? {}).sort();
  if (inPath.join() !== inSchema.join()) {
    throw new RouteConfigurationError(`${where}: path parameters [${inPath.join()}] differ from the params schema [${inSchema.join()}]`);
  }
}
