import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import { FeatureFlagCache } from '../feature-flags/flag-cache';
import { componentChecks } from '../health/components';
import { pingDatabase } from '../../db/queries/gateway/health.queries';
import { EventLoopMonitor } from '../health/event-loop';
import { createHealthReporter } from '../health/health-report';
import type { ReadinessCondition } from '../health/readiness';
import { PermissionResolver } from '../access/permission-resolver';
import type { AppDeps } from '../app';
import { createIdentityServices } from '../identity';
import type { IdentityDeps } from '../identity/deps';
import { CircuitBreakers } from '../resilience/circuit-breaker';
import { connectTemporal, type TemporalHandle } from '../temporal/client';
import { ensureBucket } from './bucket';
import { closeConnections, openConnections, type Connections } from './connections';
import { retryUntilDone } from './retry';

/** Everything the gateway process runs besides HTTP: clients, caches, monitors, start-up tasks. */
export interface GatewayRuntime {
  connections: Connections;
  /** Undefined until the start-up connection to Temporal succeeds. */
  temporal(): TemporalHandle | undefined;
  breakers: CircuitBreakers;
  flags: FeatureFlagCache;
  /** Signing keys, token service and login throttle of the identity routes. */
  identity: IdentityDeps;
  /** Resolves the permission a route declares from the caller's roles. */
  permissions: PermissionResolver;
  /** The probe dependencies of createApp. */
  probes: Pick<AppDeps, 'liveness' | 'readiness' | 'health'>;
  /** Settles when every start-up task has finished, or stopped because the runtime closed. */
  started: Promise<void>;
  close(): Promise<void>;
}

/**
 * Creates the clients and starts the background work: connecting to PostgreSQL and Temporal,
 * waiting for Redis, loading the feature flags, creating the bucket. Nothing here waits for a
 * service, so the gateway listens at once and /ready reports what is still missing.
 */
export async function startGatewayRuntime(config: Readonly<Config>, logger: Logger): Promise<GatewayRuntime> {
  const stopping = new AbortController();
  const retry = { logger, signal: stopping.signal };
  const connections = await openConnections(config, logger);
  let temporal: TemporalHandle | undefined;
  const identity = await createIdentityServices(config, { ...connections, temporal: () => temporal }, logger);
  const breakers = new CircuitBreakers();
  const flags = new FeatureFlagCache(connections.db, logger, config.featureFlags.refreshMs);
  const eventLoop = new EventLoopMonitor(config.health.maxEventLoopDelayMs);
  const established = { postgres: false, redis: false };

  eventLoop.start();
  flags.start();
  connections.redis.once('ready', () => { established.redis = true; });
  connections.redis.connect().catch(() => { /* reported by the 'error' listener; ioredis keeps reconnecting */ });

  const started = Promise.all([
    retryUntilDone('PostgreSQL connection', async () => {
      await pingDatabase(connections.db);
      established.postgres = true;
    }, retry),
    retryUntilDone('Temporal connection', async () => {
      const handle = await connectTemporal(config.temporal);
      // A connection that succeeds after shutdown began must not keep the process alive.
      if (stopping.signal.aborted) await handle.connection.close();
      else temporal = handle;
    }, retry),
    retryUntilDone(`bucket ${config.s3.bucket}`, async () => {
      const outcome = await ensureBucket(connections.s3, config.s3.bucket, config.s3.region);
      logger.info({ bucket: config.s3.bucket, outcome }, 'object storage bucket ensured');
    }, retry),
  ]).then(() => undefined);

  const readiness: ReadinessCondition[] = [
    { name: 'feature_flags', met: () => flags.status().loaded, reason: 'feature-flag cache not loaded' },
    { name: 'postgres', met: () => established.postgres, reason: 'PostgreSQL pool not connected' },
    { name: 'temporal', met: () => temporal !== undefined, reason: 'Temporal connection not established' },
    { name: 'redis', met: () => established.redis, reason: 'Redis not connected' },
  ];

  const checks = componentChecks({
    ...connections,
    temporal: () => temporal,
    bucket: config.s3.bucket,
    flags,
    breakers,
    timeoutMs: config.health.checkTimeoutMs,
  });

  return {
    connections,
    temporal: () => temporal,
    breakers,
    flags,
    identity,
    permissions: new PermissionResolver(connections.db),
    probes: {
      liveness: () => eventLoop.liveness(),
      readiness,
      health: createHealthReporter(checks, breakers, config.version),
    },
    started,
    async close() {
      stopping.abort();
      flags.stop();
      eventLoop.stop();
      // A start-up attempt in flight (a Temporal connect lasts up to its 5 s timeout) ends first,
      // so nothing it opens outlives the runtime.
      await started;
      await Promise.allSettled([closeConnections(connections), temporal?.connection.close()]);
    },
  };
}
