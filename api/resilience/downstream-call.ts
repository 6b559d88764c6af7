import { setTimeout as sleep } from 'node:timers/promises';
import { TimeoutError, withTimeout } from '../../common/timeout';
import { isProblem, isServiceFailure, problems } from '../../common/problems';
import { toProblem } from '../http/to-problem';
import type { AppMiddleware } from '../context';
import type { AnyRoute } from '../http/route-registry';
import { CircuitOpenError, type CircuitBreakers } from './circuit-breaker';
import type { TenantBreakers } from './tenant-breaker';

export interface DownstreamCallOptions {
  breakers: CircuitBreakers;
  tenants: TenantBreakers;
  /** docs/reference/gateway.md#rule-12: 5 s (GRPC_CALL_TIMEOUT_MS), then 504. */
  timeoutMs: number;
  /** docs/reference/gateway.md#rule-13: one retry after 100 ms, for idempotent GETs only. */
  retryDelayMs: number;
}

/**
 * Runs a route's handler as the gateway's call to its downstream service (the route's namespace:
 * iam, money, audit …), with the resilience rules of docs/reference/gateway.md (Rules: deadlines and failures): a deadline per attempt (504
 * `gateway-timeout`), one retry after 100 ms for a GET whose first attempt failed transiently,
 * the downstream's circuit breaker (five consecutive failures open it: 503 `service-unavailable`
 * without calling), and the caller's tenant breaker. Only server-side failures count: a 4xx
 * answer is the service working correctly.
 *
 * It calls the handler itself (it is the last middleware), because a retry cannot call Koa's
 * next() twice.
 */
export function downstreamCall(route: AnyRoute, options: DownstreamCallOptions): AppMiddleware {
  const downstream = `service:${route.namespace}`;
  const retries = route.method === 'GET' && route.idempotent !== false ? 1 : 0;
  return async (ctx) => {
    const tenantId = ctx.state.auth?.tenantId;
    if (tenantId && options.tenants.isIsolated(tenantId)) {
      throw problems.unavailable('Requests of this tenant are failing; they are paused for a short while');
    }
    const breaker = options.breakers.for(downstream);
    // A streamed body arrives at the client's pace: its transfer is not the downstream's latency. A
    // handler that keeps the deadline itself answers something better than 504 when it passes.
    const deadline = route.streamedBody || route.ownDeadline ? undefined : options.timeoutMs;
    const attempt = () => breaker.execute(
      () => settleClientErrors(withDeadline(route.handler(ctx as never), deadline)),
      (error) => !(tenantId && isDeadlinePassed(error)),
    );
    let failure: unknown;
    for (let tries = 0; tries <= retries; tries += 1) {
      if (tries > 0) await sleep(options.retryDelayMs);
      let settled: ClientError | undefined;
      try {
        settled = await attempt();
      } catch (error) {
        if (error instanceof CircuitOpenError) throw problems.unavailable(`The ${route.namespace} service is unavailable; try again shortly`);
        failure = error;
        ctx.state.log.warn({ err: error, downstream, attempt: tries + 1 }, 'downstream call failed');
        continue;
      }
      if (tenantId) options.tenants.record(tenantId, false);
      if (settled) throw settled.clientError;
      return;
    }
    if (tenantId) options.tenants.record(tenantId, true);
    throw failure;
  };
}

/**
 * A tenant's request that passed its deadline is charged to that tenant's breaker, not to the
 * namespace's: a burst of one tenant makes its own requests slow, and five of them in a row would
 * otherwise open the circuit and answer 503 to every tenant for 30 s (issue 19). A downstream that
 * hangs for everyone still isolates each tenant through its own breaker, and fails public requests,
 * which have no tenant, through the namespace's.
 */
function isDeadlinePassed(error: unknown): boolean {
  return isProblem(error) && error.type === 'gateway-timeout';
}

/**
 * An error that will be answered with a 4xx (a problem, a constraint violation, a downstream's
 * NOT_FOUND …), or with a deliberate 5xx (isServiceFailure), is a successful call as far as the
 * breakers are concerned: it is handed back, not thrown.
 */
interface ClientError { clientError: unknown }

async function settleClientErrors(call: Promise<void>): Promise<ClientError | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    if (!isServiceFailure(toProblem(error))) return { clientError: error };
    throw error;
  }
}

async function withDeadline(call: void | Promise<void>, timeoutMs: number | undefined): Promise<void> {
  const running = Promise.resolve(call);
  if (timeoutMs === undefined) return running;
  // The handler may still settle after the deadline; its outcome is then nobody's business.
  running.catch(() => undefined);
  try {
    await withTimeout(running, timeoutMs, 'The service');
  } catch (error) {
    if (error instanceof TimeoutError) throw problems.timeout(error.message);
    throw error;
  }
}
