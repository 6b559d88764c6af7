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
    if (!hasBody) {
      await next();
      return;
    }
    if (!ctx.is('json', '+json')) throw problems.unsupportedMediaType(ctx.get('content-type'));
    await parse(ctx, next);
  };
}

const rawBodies = new WeakMap<object, Buffer>();

/** The bytes of a request read by rawBodyGuard (empty when none were sent). */
export function rawBodyOf(ctx: object): Buffer {
  return rawBodies.get(ctx) ?? Buffer.alloc(0);
}

/**
 * For routes declared `rawBody`: reads the body as it was sent, up to the same limit (413), and
 * parses nothing, so the handler can verify a signature over the exact bytes first. Any content type.
 */
export function rawBodyGuard(limitBytes: number): Middleware<AppState> {
  return async (ctx, next) => {
    const declared = ctx.request.length;
    if (declared !== undefined && declared > limitBytes) throw problems.payloadTooLarge(`${limitBytes} bytes`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req) {
      size += (chunk as Buffer).length;
      if (size > limitBytes) throw problems.payloadTooLarge(`${limitBytes} bytes`);
      chunks.push(chunk as Buffer);
    }
    rawBodies.set(ctx, Buffer.concat(chunks));
    await next();
  };
}
