import type { Redis } from 'ioredis';
import type { Client as MinioClient } from 'minio';
import { describeBroker, type Admin } from '../../common/kafka';
import type { DatabasePool } from '../../db/pool';
import { isReadOnlyConnection, pingDatabase } from '../../services/gateway/probes';
import type { FeatureFlagCache, FlagCacheState } from '../runtime/flag-cache';
import type { CircuitBreaker, CircuitBreakers } from '../resilience/circuit-breaker';
import type { TemporalHandle } from '../../common/temporal/client';
import type { ComponentName, ComponentStatus, HealthStatus } from './report';
import { withTimeout } from '../../common/timeout';
import type { EventServiceProbe } from '../grpc/probe';

/** What the component checks reach; each is a real call to the real service. */
export interface HealthDependencies {
  db: DatabasePool;
  analyticsDb: DatabasePool;
  kafkaAdmin: Admin;
  /** Undefined until the start-up connection to Temporal succeeds. */
  temporal: () => TemporalHandle | undefined;
  redis: Redis;
  s3: MinioClient;
  bucket: string;
  flags: FeatureFlagCache;
  breakers: CircuitBreakers;
  /** The gateway's gRPC EventService, the event bus's other face, reported with the broker. */
  eventService: EventServiceProbe;
  timeoutMs: number;
}

/** The downstreams behind circuit breakers; the `proxy` component reports on these. */
export const DOWNSTREAMS = {
  relational_db: 'postgres',
  analytics_db: 'postgres-analytics',
  event_broker: 'kafka',
  task_queue: 'temporal',
  cache: 'redis',
  object_storage: 's3',
} as const satisfies Partial<Record<ComponentName, string>>;

/** What a check found when the service answered; a thrown error means it did not. */
type Verdict = { status: HealthStatus; error: string | null };
const HEALTHY: Verdict = { status: 'healthy', error: null };

// grpc.health.v1 ServingStatus.SERVING; its enum type lives in @temporalio/proto, not one of our dependencies.
const GRPC_HEALTH_SERVING = 1;

/** One line of the failure; a refused dual-stack connect is an AggregateError with no message of its own. */
function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0 && !error.message) return messageOf(error.errors[0]);
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0].slice(0, 300) || (error instanceof Error ? error.name : 'failed');
}

/**
 * Calls a downstream through its breaker with a deadline. A failure or timeout counts against the
 * breaker and reports the component unhealthy with no latency (it was not reached); an answer
 * reports its latency and the verdict the check drew from it.
 */
async function probe(breaker: CircuitBreaker, timeoutMs: number, call: () => Promise<Verdict>): Promise<ComponentStatus> {
  const started = performance.now();
  try {
    const { status, error } = await breaker.execute(() => withTimeout(call(), timeoutMs, breaker.name));
    return { status, latencyMs: Math.round(performance.now() - started), error };
  } catch (error) {
    return { status: 'unhealthy', latencyMs: null, error: messageOf(error) };
  }
}

export type ComponentChecks = Record<Exclude<ComponentName, 'proxy'>, () => Promise<ComponentStatus>>;

/**
 * Whether the event broker answers: its cluster metadata through the Kafka breaker, within the deadline.
 * connect() is a no-op while connected and reconnects after the broker came back. The `event_broker`
 * component and the gRPC health service (api/grpc/health.ts) both read it.
 */
export function brokerCheck(deps: Pick<HealthDependencies, 'kafkaAdmin' | 'breakers' | 'timeoutMs'>): () => Promise<ComponentStatus> {
  return () => probe(deps.breakers.for(DOWNSTREAMS.event_broker), deps.timeoutMs, async () => {
    await deps.kafkaAdmin.connect();
    const { brokers } = await describeBroker(deps.kafkaAdmin);
    return brokers > 0 ? HEALTHY : { status: 'unhealthy', error: 'the cluster reports no brokers' };
  });
}

export function componentChecks(deps: HealthDependencies): ComponentChecks {
  const guarded = (component: keyof typeof DOWNSTREAMS, call: () => Promise<Verdict>) =>
    () => probe(deps.breakers.for(DOWNSTREAMS[component]), deps.timeoutMs, call);

  return {
    relational_db: guarded('relational_db', async () => {
      await pingDatabase(deps.db);
      return HEALTHY;
    }),

    // The reporting connection must stay read-only; if it is not, it works but is misconfigured.
    analytics_db: guarded('analytics_db', async () => {
      return await isReadOnlyConnection(deps.analyticsDb) ? HEALTHY : { status: 'degraded', error: 'the analytics connection is not read-only' };
    }),

    // The event bus is the broker and the EventService (gRPC): without the service the broker still
    // carries the platform's events, so the component is degraded, not unhealthy. The service is not
    // behind the Kafka breaker: its failures say nothing about Kafka.
    event_broker: async () => {
      const broker = await brokerCheck(deps)();
      if (broker.status === 'unhealthy') return broker;
      const problem = await deps.eventService.problem(deps.timeoutMs);
      return problem ? { ...broker, status: 'degraded', error: broker.error ? `${broker.error}; ${problem}` : problem } : broker;
    },

    task_queue: async () => {
      const temporal = deps.temporal();
      if (!temporal) return { status: 'unhealthy', latencyMs: null, error: 'not connected to Temporal yet' };
      return guarded('task_queue', async () => {
        // The deadline cancels the gRPC call itself, not only our wait for it.
        const { connection } = temporal;
        const { status } = await connection.withDeadline(Date.now() + deps.timeoutMs, () => connection.healthService.check({}));
        return Number(status) === GRPC_HEALTH_SERVING ? HEALTHY : { status: 'unhealthy', error: `Temporal reports serving status ${status}` };
      })();
    },

    cache: guarded('cache', async () => {
      await deps.redis.ping();
      return HEALTHY;
    }),

    object_storage: guarded('object_storage', async () => (
      await deps.s3.bucketExists(deps.bucket) ? HEALTHY : { status: 'unhealthy', error: `bucket ${deps.bucket} does not exist` }
    )),

    feature_flags: () => Promise.resolve(flagCacheStatus(deps.flags.status(), deps.flags.refreshMs)),
  };
}

/** Unhealthy before the first load; degraded once three refresh intervals pass without a good load. */
export function flagCacheStatus(state: FlagCacheState, refreshMs: number, now = Date.now()): ComponentStatus {
  const { loaded, refreshedAt, lastLoadMs, lastError } = state;
  if (!loaded || refreshedAt === null) {
    return { status: 'unhealthy', latencyMs: null, error: `feature flags not loaded${lastError ? `: ${lastError}` : ''}` };
  }
  const ageMs = now - refreshedAt;
  if (ageMs > 3 * refreshMs) {
    return { status: 'degraded', latencyMs: lastLoadMs, error: `feature flags last refreshed ${Math.round(ageMs / 1000)} s ago: ${lastError ?? 'no refresh since'}` };
  }
  return { status: 'healthy', latencyMs: lastLoadMs, error: null };
}

/**
 * The gateway's own proxying health: its circuit breakers. All closed is healthy; some open or
 * half-open is degraded (the gateway still serves what does not depend on them); none closed is
 * unhealthy (nothing downstream is reachable).
 */
export function proxyStatus(breakers: CircuitBreakers): ComponentStatus {
  const states = Object.entries(breakers.states());
  const notClosed = states.filter(([, state]) => state !== 'closed');
  if (notClosed.length === 0) return { status: 'healthy', latencyMs: 0, error: null };
  const error = `circuits not closed: ${notClosed.map(([name, state]) => `${name} (${state})`).join(', ')}`;
  return { status: notClosed.length === states.length ? 'unhealthy' : 'degraded', latencyMs: 0, error };
}
