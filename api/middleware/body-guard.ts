import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import { problems } from '../../common/problems';
import type { AppState } from '../context';

/**
 * Reads a JSON request body, refusing what it will not parse before reading it: a declared
 * Content-Length above the limit (413) and any content type other than JSON (415). A body sent
 * without Content-Length (chunked) is cut off by the parser at the same limit (413 as well).
 * It runs per route, after routing, so an unknown path is a 404 and a wrong method a 405 first.
 */
export function bodyGuard(limitBytes: number): Middleware<AppState> {
  // The content type is checked here, so the parser may treat every body it sees as JSON.
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: limitBytes, detectJSON: () => true });
  return async (ctx, next) => {
    const declared = ctx.request.length;
    if (declared !== undefined && declared > limitBytes) throw problems.payloadTooLarge(`${limitBytes} bytes`);
    const hasBody = declared !== undefined ? declared > 0 : ctx.get('transfer-encoding') !== '';
    if (!hasBody) return next();
    if (!ctx.is('json', '+json')) throw problems.unsupportedMediaType(ctx.get('content-type'));
    return parse(ctx, next);
  };
}
