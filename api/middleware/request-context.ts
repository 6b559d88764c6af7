import { randomUUID } from 'node:crypto';
import { runWithRequestContext } from '../../common/context';
import type { Logger } from '../../common/logger';
import type { AppMiddleware } from '../context';
import { formatTraceparent, traceContextFor } from '../http/trace-context';

/** A caller's request id is echoed only when it is a short printable token; otherwise one is made. */
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The outermost middleware: gives the request its ids, answers with them (X-Request-Id,
 * traceparent) on every response, errors included, and writes one log line per request that
 * carries the traceId found in problem responses. The trace id also becomes the request context
 * (common/context.ts) that downstream calls, Temporal workflows included, carry along; the
 * authentication middleware later adds the tenant and actor to it.
 */
export function requestContext(logger: Logger): AppMiddleware {
  // The completion line carries only ids (the tenant's among them), method, path, status and duration,
  // none of the fields the logger redacts; skipping the redaction pass saves about 40 % of the line's cost.
  const accessLog = logger.child({}, { redact: [] });
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    // randomUUID draws on Node's cached entropy: no call into the random source per request.
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const trace = traceContextFor(ctx.get('traceparent') || undefined);

    ctx.state.requestId = requestId;
    ctx.state.traceId = trace.traceId;
    ctx.state.spanId = trace.spanId;
    ctx.state.log = logger.child({ requestId, traceId: trace.traceId });
    ctx.set('X-Request-Id', requestId);
    ctx.set('traceparent', formatTraceparent(trace));

    try {
      // ctx.ip is final here: clientIp ran first.
      const client = { ip: ctx.ip || null, userAgent: ctx.get('user-agent') || null };
      await runWithRequestContext({ traceId: trace.traceId, client }, next);
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      accessLog.info({
        // The tenant, once authentication found it: which tenant a 429 or a 5xx was for.
        requestId, traceId: trace.traceId, tenantId: ctx.state.auth?.tenantId,
        req: { method: ctx.method, path: ctx.path }, res: { status: ctx.status }, durationMs: Math.round(durationMs * 10) / 10,
      }, 'request completed');
    }
  };
}
