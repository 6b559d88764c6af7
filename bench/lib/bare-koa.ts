import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { config } from '../../common/config';
import { loadSigningKeys } from '../../services/identity/signing-keys';
import { TokenService } from '../../services/identity/tokens';

/**
 * The reference points of bench/gateway.bench.ts: a bare Koa app with no middleware, answering
 * GET /hello, and GET /verified, which only verifies the ES256 bearer token with the gateway's
 * own key set and verifier (the cost expected to dominate) before answering the same body.
 */
async function main(): Promise<void> {
  const cfg = config();
  const tokens = new TokenService(await loadSigningKeys(cfg.identity.jwt), cfg.identity.jwt, cfg.identity.ttl);
  const body = { message: 'Hello from the platform gateway' };
  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.path === '/verified') {
      await tokens.verifyAccessToken(ctx.get('authorization').slice('Bearer '.length));
    } else if (ctx.path !== '/hello') {
      ctx.status = 404;
      return;
    }
    ctx.body = body;
  });
  const handle = app.callback();
  // Koa's handler answers its own errors (ctx.onerror), so its promise never rejects.
  const server = createServer((request, response) => void handle(request, response));
  server.listen(0, '127.0.0.1', () => {
    console.log(JSON.stringify({ msg: 'bare koa listening', port: (server.address() as AddressInfo).port }));
  });
}

void main();
