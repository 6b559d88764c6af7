import { isProblem, isServiceFailure } from '../../common/problems';
import type { AppMiddleware } from '../context';
import { toProblem } from '../http/to-problem';

/**
 * Renders every error as RFC 9457 problem+json with `instance` (the request path) and `traceId`.
 * It sits just inside the request context, so even 404s, 405s and body-parser failures get the
 * shape, and the ids. Internal errors are logged here with their cause, once.
 */
export function problemHandler(problemBase: string): AppMiddleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const problem = toProblem(error);
      if (isServiceFailure(problem)) {
        // What was thrown is the cause, unless it was a problem that carries its own.
        const cause = isProblem(error) ? error.cause ?? error : error;
        ctx.state.log.error({ err: cause, problem: problem.type }, `request failed: ${problem.detail}`);
      }
      if (ctx.headerSent) return; // a streamed body broke off; the status line is already gone
      ctx.status = problem.status;
      ctx.type = 'application/problem+json';
      ctx.body = problem.toJSON(problemBase, ctx.path, ctx.state.traceId);
      const { allowed, retryAfter } = problem.extensions;
      if (Array.isArray(allowed)) ctx.set('Allow', allowed.join(', '));
      if (typeof retryAfter === 'number') ctx.set('Retry-After', String(retryAfter));
      // The rest of an oversized body is not worth reading (Node would drain all of it to keep the
      // connection alive): the connection is closed after the answer instead.
      if (problem.status === 413) ctx.set('Connection', 'close');
    }
  };
}
