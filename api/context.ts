import type { Middleware } from 'koa';
import type { Logger } from '../common/logger';
import type { AuthState } from '../common/context';
import { problems } from '../common/problems';

/**
 * What every request carries once the request-context middleware has run: the ids that tie its
 * response, its log lines and its downstream calls together.
 */
export interface AppState {
  requestId: string;
  traceId: string;
  /** The span id of this gateway hop (the parent id of downstream calls). */
  spanId: string;
  /** A child logger bound to requestId and traceId. */
  log: Logger;
  /** Set by the authentication middleware on bearer routes; absent on public ones. */
  auth?: AuthState;
}

/** The caller of a bearer route; the router runs authentication before any such handler. */
export function authOf(ctx: { state: AppState }): AuthState {
  if (!ctx.state.auth) throw problems.unauthorized();
  return ctx.state.auth;
}

export type AppMiddleware = Middleware<AppState>;

/** The pattern of the route that answered (`/v1/users/:id`), set by the router; undefined when none matched. */
export function matchedRoute(ctx: object): string | undefined {
  return (ctx as { _matchedRoute?: string })._matchedRoute;
}
