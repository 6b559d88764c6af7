import type { Middleware } from 'koa';
import type { Logger } from '../common/logger';

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
}

export type AppMiddleware = Middleware<AppState>;
