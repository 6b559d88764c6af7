import { createServer, type Server } from 'node:http';
import { HTTP_SERVER_OPTIONS } from './http/server-options';
import type { AddressInfo } from 'node:net';
import { config as loadConfig, ConfigError, type Config } from '../common/config';
import { createLogger, type Logger } from '../common/logger';
import { createApp } from './app';
import { platformRoutes } from './routes';
import { startGatewayRuntime } from './gateway-runtime';
import { startEventService } from './grpc/server';

/**
 * The gateway process: validated configuration (a bad value stops it with exit code 1 and a
 * message naming the variable), the runtime, the app, the gRPC EventService beside HTTP, and a
 * graceful shutdown of both on SIGTERM/SIGINT.
 */
function readConfig(): Readonly<Config> {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Stops accepting connections, lets in-flight requests finish (idle keep-alive connections are
 * closed at once), and cuts whatever is still open at the deadline.
 */
function drain(server: Server, deadlineMs: number, logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    const deadline = setTimeout(() => {
      logger.warn({ deadlineMs }, 'shutdown deadline reached; closing open connections');
      server.closeAllConnections();
    }, deadlineMs);
    server.close(() => {
      clearTimeout(deadline);
      resolve();
    });
    server.closeIdleConnections();
  });
}

async function main(): Promise<void> {
  const config = readConfig();
  const logger = createLogger('api', config.logLevel);
  const runtime = await startGatewayRuntime(config, logger);
  let shuttingDown = false;

  const app = createApp({
    config,
    logger,
    routes: platformRoutes(runtime),
    ...runtime.gateway,
    ...runtime.probes,
    readiness: [...runtime.probes.readiness, { name: 'shutdown', met: () => !shuttingDown, reason: 'shutting down' }],
  });
  const handle = app.callback();
  const server = createServer(HTTP_SERVER_OPTIONS, (request, response) => {
    // While draining, a kept-alive connection is closed after its response instead of reused.
    if (shuttingDown) response.setHeader('Connection', 'close');
    void handle(request, response);
  });
  const address = await listen(server, config.api.port, config.api.host);
  logger.info({ host: address.address, port: address.port, version: config.version }, 'gateway listening');
  const eventService = await startEventService(runtime, config, logger);

  const shutdown = async (signal: NodeJS.Signals) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    await Promise.all([drain(server, config.api.shutdownTimeoutMs, logger), eventService.close(config.api.shutdownTimeoutMs)]);
    await runtime.close();
    logger.info('shutdown complete');
    process.exit(0);
  };
  process.on('SIGTERM', (signal) => void shutdown(signal));
  process.on('SIGINT', (signal) => void shutdown(signal));
}

main().catch((error: unknown) => {
  process.stderr.write(`gateway failed to start: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
