import {
  status as GrpcStatus, type Metadata, type ServerUnaryCall, type ServiceError, type sendUnaryData, type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { runWithRequestContext, type AuthState } from '../../common/context';
import type { Logger } from '../../common/logger';
import { isProblem, problems } from '../../common/problems';
import type { EventPublishingDeps, Publisher } from '../../services/events/publishing';
import { publishBatchToTopic, publishToTopic, type TopicEvent } from '../../services/events/topic-publishing';
import type { TopicPartitions } from '../../services/events/topic-partitions';
import { topicSchema, type TopicSchemaDeps } from '../../services/events/topic-schemas';
import type { DeadLetterDeps } from '../../services/events/dead-letters/deps';
import { apiKeyAuth } from '../middleware/api-key-auth';
import { bearerAuth } from '../middleware/authenticate';
import { assertMfaEnrolled } from '../middleware/mfa-enrollment';
import type { RequestAuditor } from '../middleware/request-audit';
import type { PermissionResolver } from '../runtime/permission-resolver';
import type { VerifiedApiKeys } from '../runtime/verified-api-keys';
import type { VerifiedTokens } from '../runtime/verified-tokens';
import type { SessionRevocations } from '../runtime/session-revocations';
import { traceContextFor } from '../http/trace-context';
import { grpcStatusOf, toServiceError } from './status';
import { consumeHandler } from './consume-handler';
import { deadLetterHandlers } from './dead-letter-handlers';
import { subscriptionHandlers, type SubscriptionServiceDeps } from './subscription-handlers';

/** What the EventService's handlers call: the event bus's services and the gateway's token and permission checks. */
export interface EventServiceDeps {
  events: EventPublishingDeps & TopicSchemaDeps & { deadLetters: DeadLetterDeps };
  topics: TopicPartitions;
  tokens: VerifiedTokens;
  /** The gateway's ended sessions: their tokens are refused here as on REST. */
  revocations: SessionRevocations;
  /** API keys act on the EventService as on REST (a module's server publishing and consuming with one). */
  apiKeys: VerifiedApiKeys;
  permissions: PermissionResolver;
  /** REQUIRE_MFA_FOR_ADMINS: the same enrolment an administrator owes on REST (docs/reference/identity.md#rule-48). */
  requireMfaForAdmins: boolean;
  /** audit.api.called per authenticated call, like every REST request; null when request auditing is off. */
  requestAudit: RequestAuditor | null;
  /** Subscribe, Unsubscribe, ReplayFrom, GetConsumerPosition (subscription-handlers.ts), and Consume (consume-handler.ts). */
  subscriptions: SubscriptionServiceDeps;
  logger: Logger;
}

// The messages of protos/platform/events/v1/events.proto as @grpc/proto-loader gives them (keepCase, defaults).
interface Timestamp { seconds: string; nanos: number }
interface EventMessage {
  id: string; type: string; source: string; tenant_id: string; data: Uint8Array; schema_version: string;
  timestamp: Timestamp | null; trace_id: string;
}
interface PublishRequest { topic: string; key: string; event: EventMessage | null }
interface BatchPublishRequest { topic: string; items: Array<{ key: string; event: EventMessage | null }> }
interface GetTopicSchemaRequest { topic: string }

/** The caller of one call: who (from the token only) and under which trace. */
interface Caller {
  auth: AuthState;
  traceId: string;
}

const PUBLISH_PERMISSION = 'events.publish';
const TRACE_ID = /^[0-9a-f]{32}$/;

/**
 * The EventService's RPCs: Publish, BatchPublish, ListTopics and GetTopicSchema here; the dead
 * letters' (dead-letter-handlers.ts) and the consumer groups' (subscription-handlers.ts) run through
 * the same `answer` (token, request context, status, audit record).
 */
export function eventServiceHandlers(deps: EventServiceDeps): UntypedServiceImplementation {
  const unary = <Request, Response>(method: string, handle: (caller: Caller, request: Request) => Promise<Response>) =>
    (call: ServerUnaryCall<Request, Response>, callback: sendUnaryData<Response>) => {
      void answer(deps, method, call.metadata, (caller) => handle(caller, call.request)).then(
        (response) => callback(null, response),
        (error: ServiceError) => callback(error),
      );
    };

  return {
    Publish: unary('Publish', async (caller, request: PublishRequest) => {
      await requirePublish(deps, caller);
      const { eventId } = await publishToTopic(deps.events, publisherOf(caller), request.topic, topicEventOf(request.key, request.event, 'event'));
      return { event_id: eventId };
    }),
    BatchPublish: unary('BatchPublish', async (caller, request: BatchPublishRequest) => {
      await requirePublish(deps, caller);
      const events = request.items.map((item, index) => topicEventOf(item.key, item.event, `items[${index}].event`));
      const ids = await publishBatchToTopic(deps.events, publisherOf(caller), request.topic, events);
      return { published_count: ids.length };
    }),
    ListTopics: unary('ListTopics', async () => {
      const topics = await deps.topics.list();
      return { topics: topics.map(({ name, partitionCount }) => ({ name, partition_count: partitionCount })) };
    }),
    GetTopicSchema: unary('GetTopicSchema', async (_caller, request: GetTopicSchemaRequest) => {
      const { topic, schema, schemaVersion } = await topicSchema(deps.events, request.topic);
      return { topic, schema, schema_version: schemaVersion };
    }),
    ...deadLetterHandlers({ deadLetters: deps.events.deadLetters, permissions: deps.permissions }, (method, metadata, handle) => answer(deps, method, metadata, handle)),
    ...subscriptionHandlers(deps.subscriptions, (method, metadata, handle) => answer(deps, method, metadata, handle)),
    ...consumeHandler(deps.subscriptions, (method, metadata, handle) => answer(deps, method, metadata, handle)),
  };
}

/**
 * Runs one call: the API key or bearer token of its metadata (missing or invalid → UNAUTHENTICATED),
 * the handler under the caller's request context, the answer or the status of what it threw, and
 * the call's audit record.
 */
async function answer<Response>(
  deps: EventServiceDeps, method: string, metadata: Metadata, handle: (caller: Caller) => Promise<Response>,
): Promise<Response> {
  const started = performance.now();
  const traceId = traceContextFor(firstValue(metadata, 'traceparent')).traceId;
  let caller: Caller | undefined;
  let code = GrpcStatus.OK;
  try {
    const auth = await apiKeyAuth({ path: `/grpc/${method}`, get: (header) => firstValue(metadata, header) ?? '' }, deps.apiKeys)
      ?? await bearerAuth(firstValue(metadata, 'authorization'), deps.tokens, deps.revocations);
    caller = { auth, traceId };
    // No EventService method enrols two-factor, so every one is held to it.
    if (deps.requireMfaForAdmins) await assertMfaEnrolled(deps.permissions, auth);
    const context = { traceId, tenantId: auth.tenantId, actorId: auth.userId, ...(auth.impersonatorId ? { impersonatorId: auth.impersonatorId } : {}) };
    return await runWithRequestContext(context, () => handle(caller!));
  } catch (error) {
    code = isProblem(error) ? grpcStatusOf(error) : GrpcStatus.INTERNAL;
    throw toServiceError(error, deps.logger, method);
  } finally {
    if (caller) audit(deps, method, caller, metadata, code, performance.now() - started);
  }
}

function audit(deps: EventServiceDeps, method: string, { auth, traceId }: Caller, metadata: Metadata, code: GrpcStatus, elapsedMs: number): void {
  const route = `/platform.events.v1.EventService/${method}`;
  deps.requestAudit?.record({
    tenantId: auth.tenantId, source: 'gateway', traceId, action: 'audit.api.called',
    entityType: 'route', entityId: `gRPC ${route}`, actorId: auth.userId, actorIp: null,
    actorUserAgent: firstValue(metadata, 'user-agent')?.slice(0, 500) ?? null, impersonatorId: auth.impersonatorId ?? null,
    meta: { method: 'gRPC', route, grpcStatus: GrpcStatus[code], latencyMs: Math.round(elapsedMs) },
  });
}

async function requirePublish(deps: EventServiceDeps, { auth }: Caller): Promise<void> {
  if (!(await deps.permissions.allows(auth, PUBLISH_PERMISSION))) throw problems.forbidden(`The permission ${PUBLISH_PERMISSION} is required`);
}

const publisherOf = ({ auth, traceId }: Caller): Publisher => ({ tenantId: auth.tenantId, traceId });

function firstValue(metadata: Metadata, key: string): string | undefined {
  const [value] = metadata.get(key);
  return typeof value === 'string' ? value : undefined;
}

/**
 * The wire Event as the service's input. `data` is the JSON of an object (the typed payload);
 * `tenant_id` and `source` are ignored (the tenant is the token's, the source the type's module);
 * `id`, `timestamp` and a well-formed `trace_id` are the publisher's when given.
 */
function topicEventOf(key: string, event: EventMessage | null, field: string): TopicEvent {
  if (!event) throw problems.validation([{ field, code: 'REQUIRED', message: `${field} is required` }]);
  const data = jsonObjectOf(event.data);
  if (!data) {
    throw problems.validation([{ field: `${field}.data`, code: 'INVALID_TYPE', message: 'data must be the UTF-8 JSON of an object' }]);
  }
  return {
    key,
    type: event.type,
    data,
    dataBytes: event.data.byteLength,
    ...(event.schema_version ? { schemaVersion: event.schema_version } : {}),
    ...(event.id ? { id: event.id } : {}),
    ...(event.timestamp ? { timestamp: isoOf(event.timestamp) } : {}),
    ...(TRACE_ID.test(event.trace_id) ? { traceId: event.trace_id } : {}),
  };
}

function jsonObjectOf(bytes: Uint8Array): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : null;
  } catch {
    return null;
  }
}

function isoOf({ seconds, nanos }: Timestamp): string {
  return new Date(Number(seconds) * 1000 + Math.floor(nanos / 1e6)).toISOString();
}
