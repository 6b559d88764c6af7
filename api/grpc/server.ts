import { Server, ServerCredentials } from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import { loadProtoDefinition } from '../../common/proto';
import { EVENT_SERVICE_NAME, eventServiceClass } from '../../services/events/event-service';
import { brokerCheck } from '../health/components';
import { MAX_EVENT_DATA_BYTES } from '../../services/events/event-rules';
import { TopicPartitions } from '../../services/events/topic-partitions';
import type { GatewayRuntime } from '../gateway-runtime';
import { VerifiedTokens } from '../runtime/verified-tokens';
import { eventServiceHandlers } from './event-service';
import { EventServiceServing, healthHandlers, healthServiceClass } from './health';
import { createSubscriptionService } from './subscriptions';

/** How often a watched health status is checked again (grpc.health.v1 Watch), as a probe's period would be. */
const HEALTH_WATCH_INTERVAL_MS = 5_000;

/** How long ListTopics reuses the broker's partition counts (they change only when an operator adds partitions). */
const TOPIC_PARTITIONS_TTL_MS = 10_000;

export interface EventServiceServer {
  /** `host:port` as bound (the port is the real one when 0 was asked for). */
  address: string;
  port: number;
  /** Lets calls in flight finish for up to `deadlineMs`, then cuts what is left. */
  close(deadlineMs: number): Promise<void>;
}

/**
 * The gRPC EventService (platform.events.v1, docs/reference/events.md#resources), served by the gateway process beside
 * HTTP on API_HOST:GRPC_PORT (127.0.0.1:50051): it shares the gateway's runtime (the publishing
 * producer, the schema and installed-module caches, the permission resolver, the Kafka admin), so
 * it needs no process, pool or cache of its own. `port` 0 binds an ephemeral port (tests).
 */
export async function startEventService(
  runtime: GatewayRuntime, config: Readonly<Config>, logger: Logger, port: number = config.api.grpcPort,
): Promise<EventServiceServer> {
  const subscriptions = createSubscriptionService(runtime, config, logger);
  const server = new Server({
    // A 1 MB payload (docs/reference/events.md#rule-9) and its envelope fit, as in REST publishing's body limit.
    'grpc.max_receive_message_length': 2 * MAX_EVENT_DATA_BYTES,
  });
  server.addService(eventServiceClass().service, eventServiceHandlers({
    events: runtime.events,
    topics: new TopicPartitions(runtime.connections.kafkaAdmin, TOPIC_PARTITIONS_TTL_MS),
    // Its own cache of verified tokens: one ES256 check per token per protocol, none per call.
    tokens: new VerifiedTokens(runtime.identity.tokens, config.api.verifiedTokenCacheSize),
    revocations: runtime.revocations,
    apiKeys: runtime.gateway.apiKeys,
    permissions: runtime.access.resolver,
    requireMfaForAdmins: config.identity.requireMfaForAdmins,
    requestAudit: config.audit.requestEnabled ? runtime.gateway.requestAudit : null,
    subscriptions: subscriptions.deps,
    logger,
  }));
  // The ecosystem's conventions (docs/decisions/events.md): grpc.health.v1.Health, SERVING while the broker
  // answers, and server reflection (v1 and v1alpha) of both services, so grpcurl needs none of our proto files.
  const broker = brokerCheck({ kafkaAdmin: runtime.connections.kafkaAdmin, breakers: runtime.breakers, timeoutMs: config.health.checkTimeoutMs });
  const health = healthHandlers(
    new EventServiceServing(async () => (await broker()).status !== 'unhealthy', HEALTH_WATCH_INTERVAL_MS), [EVENT_SERVICE_NAME], logger,
  );
  server.addService(healthServiceClass().service, health.handlers);
  new ReflectionService(loadProtoDefinition(['platform/events/v1/events.proto', 'grpc/health/v1/health.proto'])).addToServer(server);
  const host = config.api.host;
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (error, actual) => (error ? reject(error) : resolve(actual)));
  }).catch(async (error: unknown) => {
    health.close();
    await subscriptions.close();
    throw error;
  });
  const address = `${host}:${bound}`;
  runtime.eventService.listening(address);
  logger.info({ host, port: bound }, 'EventService (gRPC) listening');
  return {
    address,
    port: bound,
    async close(deadlineMs) {
      runtime.eventService.listening(null);
      // Watch streams never finish by themselves either.
      health.close();
      await new Promise<void>((resolve) => {
        const deadline = setTimeout(() => {
          logger.warn({ deadlineMs }, 'EventService shutdown deadline reached; cancelling open calls');
          server.forceShutdown();
          resolve();
        }, deadlineMs);
        // Subscribe streams never finish by themselves: they are ended (OK) first, so their consumers leave their groups now.
        void subscriptions.close()
          .catch((error: unknown) => logger.warn({ err: error }, 'Subscribe streams did not all end cleanly'))
          .finally(() => server.tryShutdown(() => {
            clearTimeout(deadline);
            resolve();
          }));
      });
    },
  };
}
