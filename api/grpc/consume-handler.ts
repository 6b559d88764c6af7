import type { ServerDuplexStream, ServiceError, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { EventEnvelope } from '../../common/event-envelope';
import { problems } from '../../common/problems';
import { prepareGroup } from '../../services/events/group-offsets';
import { checkSubscription } from '../../services/events/subscription-rules';
import { requireSubscribe, type RunCall, type SubscriptionServiceDeps } from './subscription-handlers';
import {
  streamSubscription, unlessEnding, wireEventOf, writeMessage, type Deliver, type SubscribeRequest, type SubscribeResponse,
} from './subscription-stream';

/** The messages of the Consume call (events.proto): a subscription first, then one answer per event. */
interface ConsumeRequest {
  subscribe?: SubscribeRequest | null;
  ack?: { event_id: string; success: boolean; error: string } | null;
}

type ConsumeCall = ServerDuplexStream<ConsumeRequest, SubscribeResponse>;

/**
 * Consume (docs/reference/events.md#rule-15): what Subscribe streams, each event counted delivered only once the
 * caller acknowledged it — the module SDK's subscribe (sdk/events.ts), whose acknowledgement follows
 * its handler. The first message names the topic and group exactly as Subscribe's request does, and
 * gets Subscribe's checks and statuses; each event then waits for its answer. A refusal (`success`
 * false) or no answer within EVENTS_CONSUME_ACK_TIMEOUT_MS is a failed attempt of the delivery
 * pipeline: the event is sent again after the backoff and dead-lettered after BROKER_MAX_ATTEMPTS,
 * as any platform handler's would be. A closed stream aborts the delivery (nothing committed).
 */
export function consumeHandler(deps: SubscriptionServiceDeps, run: RunCall): UntypedServiceImplementation {
  return {
    Consume: (call: ConsumeCall) => {
      const answers = new Answers(call);
      void run('Consume', call.metadata, async ({ auth }) => {
        const request = await answers.subscription();
        await requireSubscribe(deps, auth);
        const subscription = await checkSubscription(deps.rules, auth.tenantId, request.topic, request.group_id);
        await prepareGroup(deps.groups, subscription);
        await streamSubscription(deps.streams, deps.start, call, subscription, answers.deliverAcknowledged(deps.ackTimeoutMs));
      }).then(
        () => { if (!call.cancelled) call.end(); },
        (error: ServiceError) => { if (!call.cancelled) call.emit('error', error); },
      );
    },
  };
}

/** The caller's side of one Consume call: its subscription message, then the answers to the events written. */
class Answers {
  private readonly first: Promise<SubscribeRequest>;
  private readonly waiting = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();

  constructor(private readonly call: ConsumeCall) {
    let subscribed: ((request: SubscribeRequest) => void) | null = null;
    let refused: (error: Error) => void = () => undefined;
    this.first = new Promise((resolve, reject) => {
      subscribed = resolve;
      refused = reject;
    });
    this.first.catch(() => undefined);
    call.on('data', (request: ConsumeRequest) => {
      if (subscribed) {
        const subscription = request.subscribe;
        if (subscription) subscribed(subscription);
        else refused(problems.validation([{ field: 'subscribe', code: 'REQUIRED', message: 'The first message of Consume is the subscription' }]));
        subscribed = null;
      } else if (request.ack) {
        this.answered(request.ack);
      }
    });
    call.on('end', () => refused(problems.validation([{ field: 'subscribe', code: 'REQUIRED', message: 'Consume ended before its subscription' }])));
  }

  subscription(): Promise<SubscribeRequest> {
    return this.first;
  }

  /** Writes each event and resolves once the caller acknowledged it; a refusal or silence is a failed attempt. */
  deliverAcknowledged(timeoutMs: number): Deliver {
    return async (envelope: EventEnvelope, ending: AbortSignal) => {
      const answered = this.answerTo(envelope.id, timeoutMs);
      try {
        await writeMessage(this.call, { event: wireEventOf(envelope) }, ending);
        await unlessEnding(ending, answered.promise);
      } finally {
        answered.forget();
      }
    };
  }

  private answerTo(eventId: string, timeoutMs: number): { promise: Promise<void>; forget: () => void } {
    let timer: NodeJS.Timeout | undefined;
    const promise = new Promise<void>((resolve, reject) => {
      this.waiting.set(eventId, { resolve, reject });
      timer = setTimeout(() => reject(new Error(`no acknowledgement of event ${eventId} within ${timeoutMs} ms`)), timeoutMs);
    });
    // Settled by the caller, the timer or an ending stream; whoever awaits it hears the outcome.
    promise.catch(() => undefined);
    return {
      promise,
      forget: () => {
        clearTimeout(timer);
        this.waiting.delete(eventId);
      },
    };
  }

  private answered({ event_id: eventId, success, error }: NonNullable<ConsumeRequest['ack']>): void {
    const waiter = this.waiting.get(eventId);
    if (!waiter) return;
    if (success) waiter.resolve();
    else waiter.reject(new Error(`the subscriber failed on event ${eventId}: ${error || 'no reason given'}`));
  }
}
