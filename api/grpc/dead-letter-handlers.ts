import type { Metadata, ServerUnaryCall, ServiceError, UntypedServiceImplementation, sendUnaryData } from '@grpc/grpc-js';
import type { AuthState } from '../../common/context';
import { problems } from '../../common/problems';
import type { DeadLetterActor } from '../../services/events/dead-letters/audit';
import type { DeadLetterDeps } from '../../services/events/dead-letters/deps';
import { replayAllDeadLetters } from '../../services/events/dead-letters/replay';
import { DEAD_LETTER_RETRY_PERMISSION } from '../../services/events/dead-letters/replay-job';
import { retryEvent } from '../../services/events/dead-letters/retry';
import type { PermissionResolver } from '../runtime/permission-resolver';

/**
 * The dead-letter RPCs of the EventService (docs/reference/events.md#resources): DLQRetry and
 * DLQReplayAll, on the caller's tenant's dead letters only, each needing events.dlq.retry (migration
 * 0033). services/events/dead-letters/ has the rules; docs/decisions/events.md (Dead letters) the choices.
 */
export interface DeadLetterServiceDeps {
  deadLetters: DeadLetterDeps;
  permissions: PermissionResolver;
}

/** The caller of one call, as event-service.ts's `answer` gives it. */
interface Caller {
  auth: AuthState;
  traceId: string;
}

/** Runs one call with its token checked, its request context and its audit record (event-service.ts `answer`). */
export type RunDeadLetterCall = <Response>(method: string, metadata: Metadata, handle: (caller: Caller) => Promise<Response>) => Promise<Response>;

interface DLQRetryRequest { event_id: string }
interface DLQRetryResponse { success: boolean; message: string }
interface DLQReplayAllResponse { replayed: number; skipped_already_resolved: number }

export function deadLetterHandlers(deps: DeadLetterServiceDeps, run: RunDeadLetterCall): UntypedServiceImplementation {
  const unary = <Request, Response>(method: string, handle: (caller: Caller, request: Request) => Promise<Response>) =>
    (call: ServerUnaryCall<Request, Response>, callback: sendUnaryData<Response>) => {
      void run(method, call.metadata, (caller) => handle(caller, call.request)).then(
        (response) => callback(null, response),
        (error: ServiceError) => callback(error),
      );
    };

  /** The caller as the dead-letter service knows it, once the permission is checked. */
  const actorOf = async ({ auth, traceId }: Caller): Promise<DeadLetterActor> => {
    if (!(await deps.permissions.allows(auth, DEAD_LETTER_RETRY_PERMISSION))) {
      throw problems.forbidden(`The permission ${DEAD_LETTER_RETRY_PERMISSION} is required`);
    }
    return { tenantId: auth.tenantId, actorId: auth.userId, traceId };
  };

  return {
    /**
     * NOT_FOUND: no dead letter of the event in the caller's tenant; FAILED_PRECONDITION: every one
     * of them resolved or expired; UNAVAILABLE: the broker did not take it (nothing changed).
     */
    DLQRetry: unary('DLQRetry', async (caller, request: DLQRetryRequest): Promise<DLQRetryResponse> => {
      const { message } = await retryEvent(deps.deadLetters, await actorOf(caller), request.event_id);
      return { success: true, message };
    }),
    /**
     * Starts the tenant's replay-all workflow, or joins the one that runs, and answers its totals
     * when it is done; the caller's deadline bounds the wait, the replay goes on without it.
     */
    DLQReplayAll: unary('DLQReplayAll', async (caller): Promise<DLQReplayAllResponse> => {
      const { replayed, skippedAlreadyResolved } = await replayAllDeadLetters(deps.deadLetters, await actorOf(caller));
      return { replayed, skipped_already_resolved: skippedAlreadyResolved };
    }),
  };
}
