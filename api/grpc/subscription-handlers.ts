import type { Metadata, ServerUnaryCall, ServerWritableStream, ServiceError, UntypedServiceImplementation, sendUnaryData } from '@grpc/grpc-js';
import type { AuthState } from '../../common/context';
import { problems } from '../../common/problems';
import { BULK_IMPORT_LAG, type ConsumerLag } from '../../services/events/consumer-lag';
import {
  checkReplayWindow, deleteTenantGroup, groupPosition, prepareGroup, seekGroup, type GroupAdmin, type Replay,
} from '../../services/events/group-offsets';
import { checkSubscription, tenantGroupOf, type SubscriptionRuleDeps, type TenantGroup } from '../../services/events/subscription-rules';
import type { PermissionResolver } from '../runtime/permission-resolver';
import type { OpenStreams } from './open-streams';
import { streamSubscription, watchedOf, type StartDelivery, type SubscribeRequest, type SubscribeResponse } from './subscription-stream';

/**
 * The consumer-group RPCs of the EventService (docs/reference/events.md#resources): Subscribe, Unsubscribe, ReplayFrom and
 * GetConsumerPosition, on the caller's tenant's groups only (docs/decisions/events.md, gRPC
 * consumer-group RPCs). Each needs the permission events.subscribe.
 */
export interface SubscriptionServiceDeps {
  rules: SubscriptionRuleDeps;
  groups: GroupAdmin;
  streams: OpenStreams;
  start: StartDelivery;
  lag: ConsumerLag;
  permissions: PermissionResolver;
  retention: { standardHours: number; auditHours: number };
  /** How long lag alerts stay quiet after a bulk replay (BROKER_BULK_IMPORT_SUPPRESS_MINUTES), for ReplayFrom's message. */
  bulkImportSuppressMinutes: number;
  /** De-duplication window of non-financial events (EVENTS_DEDUP_HOURS), for ReplayFrom's message. */
  dedupHours: number;
  /** How long Consume waits for an event's acknowledgement (EVENTS_CONSUME_ACK_TIMEOUT_MS). */
  ackTimeoutMs: number;
}

/** The caller of one call, as event-service.ts's `answer` gives it. */
interface Caller {
  auth: AuthState;
  traceId: string;
}

/** Runs one call with its token checked, its request context and its audit record (event-service.ts `answer`). */
export type RunCall = <Response>(method: string, metadata: Metadata, handle: (caller: Caller) => Promise<Response>) => Promise<Response>;

interface Timestamp { seconds: string; nanos: number }
interface GroupRequest { topic: string; group_id: string }
interface ReplayFromRequest extends GroupRequest { from_timestamp: Timestamp | null }

const SUBSCRIBE_PERMISSION = 'events.subscribe';

export function subscriptionHandlers(deps: SubscriptionServiceDeps, run: RunCall): UntypedServiceImplementation {
  const unary = <Request, Response>(method: string, handle: (caller: Caller, request: Request) => Promise<Response>) =>
    (call: ServerUnaryCall<Request, Response>, callback: sendUnaryData<Response>) => {
      void run(method, call.metadata, (caller) => handle(caller, call.request)).then(
        (response) => callback(null, response),
        (error: ServiceError) => callback(error),
      );
    };

  /** The caller's group named by the request, after the permission: NOT_FOUND topic, INVALID_ARGUMENT group. */
  const groupOf = async ({ auth }: Caller, request: GroupRequest): Promise<TenantGroup> => {
    await requireSubscribe(deps, auth);
    return tenantGroupOf(auth.tenantId, request.topic, request.group_id);
  };

  return {
    Subscribe: (call: ServerWritableStream<SubscribeRequest, SubscribeResponse>) => {
      void run('Subscribe', call.metadata, async ({ auth }) => {
        await requireSubscribe(deps, auth);
        const subscription = await checkSubscription(deps.rules, auth.tenantId, call.request.topic, call.request.group_id);
        await prepareGroup(deps.groups, subscription);
        await streamSubscription(deps.streams, deps.start, call, subscription);
      }).then(
        () => { if (!call.cancelled) call.end(); },
        (error: ServiceError) => { if (!call.cancelled) call.emit('error', error); },
      );
    },
    Unsubscribe: unary('Unsubscribe', async (caller, request: GroupRequest) => {
      const target = await groupOf(caller, request);
      const open = deps.streams.topicOf(target.groupId);
      if (open !== null && open !== target.topic) throw problems.notFound(`consumer group ${target.group} on ${target.topic}`);
      await deleteTenantGroup(deps.groups, target, open !== null, () => deps.streams.endGroup(target.groupId));
      deps.lag.forget(target.groupId);
      return {};
    }),
    ReplayFrom: unary('ReplayFrom', async (caller, request: ReplayFromRequest) => {
      const target = await groupOf(caller, request);
      if (!request.from_timestamp) throw problems.validation([{ field: 'from_timestamp', code: 'REQUIRED', message: 'from_timestamp is required' }]);
      const fromMs = Number(request.from_timestamp.seconds) * 1000 + Math.floor(request.from_timestamp.nanos / 1e6);
      checkReplayWindow(target, fromMs, deps.retention, Date.now());
      let ended = 0;
      const replay = await seekGroup(deps.groups, target, fromMs, async () => { ended = await deps.streams.endGroup(target.groupId); });
      deps.lag.replayed(watchedOf(target), replay.lag);
      return { message: replayMessage(deps, target, fromMs, replay, ended) };
    }),
    GetConsumerPosition: unary('GetConsumerPosition', async (caller, request: GroupRequest) => {
      const position = await groupPosition(deps.groups, await groupOf(caller, request));
      return { current_offset: position.current.toString(), latest_offset: position.latest.toString(), lag: position.lag.toString() };
    }),
  };
}

export async function requireSubscribe(deps: SubscriptionServiceDeps, auth: AuthState): Promise<void> {
  if (!(await deps.permissions.allows(auth, SUBSCRIBE_PERMISSION))) throw problems.forbidden(`The permission ${SUBSCRIBE_PERMISSION} is required`);
}

/** ReplayFrom's confirmation: where the group now stands, what happened to its streams, and what de-duplication will drop. */
function replayMessage(deps: SubscriptionServiceDeps, target: TenantGroup, fromMs: number, replay: Replay, ended: number): string {
  const parts = [
    `Consumer group ${target.group} reads ${target.topic} again from ${new Date(fromMs).toISOString()} `
      + `(${replay.partitions} partitions; lag ${replay.lag} messages, other tenants' included, which it skips).`,
    ended > 0
      ? `${ended} open stream${ended === 1 ? '' : 's'} of the group in this gateway ended (OK) so that Kafka let it move; subscribe again to receive.`
      : 'No stream of the group was open in this gateway; the next Subscribe reads from there.',
    `Events the group has already received are dropped by de-duplication (the event id is the de-dup key; money.* for good, `
      + `others for ${deps.dedupHours} h); the others are delivered.`,
  ];
  if (replay.lag > BULK_IMPORT_LAG) parts.push(`Lag alerts of the group are suppressed for ${deps.bulkImportSuppressMinutes} minutes (bulk import).`);
  return parts.join(' ');
}
