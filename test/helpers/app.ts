import { createApp } from '../../api/app';
import { platformRoutes } from '../../api/routes';
import type { AnyRoute } from '../../api/http/route-registry';
import { HTTP_SERVER_OPTIONS } from '../../api/http/server-options';
import { startGatewayRuntime, type GatewayRuntime } from '../../api/gateway-runtime';
import { loadConfig, type Config } from '../../common/config';
import { createLogger } from '../../common/logger';
import { startEventService } from '../../api/grpc/server';
import { call, serve, waitFor } from './http';

export interface TestGateway {
  baseUrl: string;
  /** `host:port` of the gateway's gRPC EventService (an ephemeral port). */
  grpcAddress: string;
  /** Every route the gateway serves: the platform's and the test's own. */
  routes: readonly AnyRoute[];
  config: Readonly<Config>;
  runtime: GatewayRuntime;
  /** The full `type` URI of a problem suffix, as this gateway answers it. */
  problemType(suffix: string): string;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  /** Routes added to the platform's own, for tests that need a route of a particular shape. */
  routes?: AnyRoute[];
  /** Environment overrides on top of the test defaults. */
  env?: Record<string, string>;
  /** Wait until /ready answers 200 (every start-up condition met) before returning. */
  waitUntilReady?: boolean;
}

/**
 * The real gateway (real runtime, real services) on an ephemeral port, configured as in the test
 * environment: quiet logs, response validation on, rate limits out of the way.
 */
export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const config = loadConfig({
    // Every test file's gateway charges public routes, and failed logins, to the same 127.0.0.1
    // counters in the one Redis, and files run two at a time: past a limit one file's failures would
    // make another's logins wait. The rate-limit and login-throttle tests set their own limits, and
    // the throttle's per-address tests send addresses of their own.
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_ADMIN_PER_MINUTE: '1000000',
    LOGIN_THROTTLE_IP_ATTEMPTS: '1000000',
    // The webhook tests' receivers listen on 127.0.0.1 (.env.example sets the same).
    WEBHOOKS_ALLOW_LOOPBACK: 'true',
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    ...options.env,
  });
  const logger = createLogger('api-test', config.logLevel);
  const runtime = await startGatewayRuntime(config, logger);
  const routes = [...platformRoutes(runtime), ...(options.routes ?? [])];
  const app = createApp({ config, logger, routes, ...runtime.gateway, ...runtime.probes });
  const handle = app.callback();
  // Koa's handler answers its own errors (ctx.onerror), so its promise never rejects.
  const server = await serve((request, response) => void handle(request, response), HTTP_SERVER_OPTIONS);
  // As api/server.ts does beside HTTP, on a port of its own.
  const eventService = await startEventService(runtime, config, logger, 0);
  if (options.waitUntilReady) {
    await waitFor('the gateway to be ready', async () => (await call(`${server.baseUrl}/ready`)).status === 200);
  }
  return {
    baseUrl: server.baseUrl,
    grpcAddress: eventService.address,
    routes,
    config,
    runtime,
    problemType: (suffix) => `${config.api.problemBase}/${suffix}`,
    async close() {
      await Promise.all([server.close(), eventService.close(1000)]);
      await runtime.close();
    },
  };
}
