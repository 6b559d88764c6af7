import { defineRoute } from '../registry';
import { helloResponse } from './hello.schemas';

/**
 * A public route that touches nothing downstream: the baseline for the gateway's own overhead
 * (the access-control issue benchmarks its middleware chain against it).
 */
export const helloRoute = defineRoute({
  namespace: 'gateway',
  method: 'GET',
  path: '/gateway/hello',
  operationId: 'gateway.hello',
  summary: 'Greets the caller',
  description: 'Public; answers without calling any service. Useful to measure the gateway itself.',
  auth: 'public',
  schemas: { response: { 200: helloResponse } },
  handler(ctx) {
    ctx.body = { message: 'Hello from the platform gateway' };
  },
});
