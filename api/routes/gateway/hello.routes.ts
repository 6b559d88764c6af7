import { defineRoute } from '../../http/route-registry';
import { helloResponse } from './hello.schemas';

const greeting = { message: 'Hello from the platform gateway' };

/**
 * Two routes with the same handler, touching nothing downstream: the baselines of the gateway's
 * own overhead. The public one runs with every check off (no token, no permission, no rate limit);
 * the secure one runs the whole pipeline of docs/reference/gateway.md#rule-5 (token, permission, rate limit), so the
 * difference between them is what the checks cost (bench/gateway.bench.ts).
 */
export const helloRoutes = [
  defineRoute({
    namespace: 'gateway',
    method: 'GET',
    path: '/gateway/hello',
    operationId: 'gateway.hello',
    summary: 'Greets the caller',
    description: 'Public and not rate limited; answers without calling any service. Useful to measure the gateway itself.',
    auth: 'public',
    rateLimit: false,
    schemas: { response: { 200: helloResponse } },
    handler(ctx) {
      ctx.body = greeting;
    },
  }),
  defineRoute({
    namespace: 'gateway',
    method: 'GET',
    path: '/gateway/hello/secure',
    operationId: 'gateway.helloSecure',
    summary: 'Greets an authenticated caller holding settings.read',
    description: 'The same answer as /gateway/hello behind authentication, a permission check and the rate limit.',
    auth: 'bearer',
    permission: 'settings.read',
    schemas: { response: { 200: helloResponse } },
    handler(ctx) {
      ctx.body = greeting;
    },
  }),
];
