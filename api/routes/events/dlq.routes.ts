import { pageRequestOf } from '../../../common/pagination';
import type { DeadLetterActor } from '../../../services/events/dead-letters/audit';
import type { DeadLetterDeps } from '../../../services/events/dead-letters/deps';
import { listDeadLetters, readDeadLetter } from '../../../services/events/dead-letters/read';
import { startDeadLetterReplay } from '../../../services/events/dead-letters/replay';
import { DEAD_LETTER_RETRY_PERMISSION } from '../../../services/events/dead-letters/replay-job';
import { retryDeadLetter } from '../../../services/events/dead-letters/retry';
import { authOf } from '../../context';
import { acceptJob } from '../../http/job-accepted';
import { defineRoute, feeds, type AnyRoute, type RouteContext } from '../../http/route-registry';
import {
  deadLetter, deadLetterListQuery, deadLetterPage, deadLetterParams, replayAccepted,
  type DeadLetterListQuery, type DeadLetterParams,
} from './dlq.schemas';

type NoParams = Record<string, never>;

const READ_PERMISSION = 'events.dlq.read';

function actorOf(ctx: RouteContext): DeadLetterActor {
  const auth = authOf(ctx);
  return { tenantId: auth.tenantId, actorId: auth.userId, traceId: ctx.state.traceId };
}

/**
 * The dead-letter routes of the integration service (docs/reference/events.md#resources: GET /integrations/dlq, POST
 * /integrations/dlq/:id/retry), a record of its own (GET /integrations/dlq/:id) and replay-all as a
 * job (POST /integrations/dlq/replay, the redrive of all; DLQReplayAll over gRPC). Reading
 * needs events.dlq.read, retrying and replaying events.dlq.retry (migration 0033). Another tenant's
 * dead letter is 404 not-found. services/events/dead-letters/ has the rules; docs/decisions/events.md the choices.
 */
export function deadLetterRoutes(deps: DeadLetterDeps): AnyRoute[] {
  return [
    defineRoute<NoParams, DeadLetterListQuery>({
      namespace: 'events', method: 'GET', path: '/integrations/dlq', operationId: 'events.dlq.list',
      summary: 'The tenant\'s dead-lettered events, newest first',
      description: 'The DLQRecord of platform.events.v1 in snake_case, with the record\'s id, times_dead_lettered, quarantined and where the group '
        + 'read the event. Filters status (pending, retrying, resolved, expired), consumer_group and event_type. page_size/page_token '
        + 'answer {data, next_page_token}, limit/cursor answer {data, meta {cursor, hasMore}}; 1 to 100, default 20.',
      auth: 'bearer', permission: READ_PERMISSION,
      // A page's first dead letter feeds the operations on one (the fuzzer's tenant has none until a consumer fails).
      schemas: { query: deadLetterListQuery, response: { 200: deadLetterPage }, links: { 200: feeds(['events.dlq.get', 'events.dlq.retry'], { from: '$response.body#/data/0/id' }) } },
      async handler(ctx) {
        const { status, consumer_group: consumerGroup, event_type: eventType, ...paging } = ctx.guard.query;
        ctx.body = await listDeadLetters(deps, authOf(ctx).tenantId, { status, consumerGroup, eventType }, pageRequestOf(paging));
      },
    }),
    defineRoute({
      namespace: 'events', method: 'POST', path: '/integrations/dlq/replay', operationId: 'events.dlq.replay',
      summary: 'Re-publishes every pending dead letter of the tenant, 50 a second, as a job',
      description: '202 with the job; Location: /v1/jobs/{jobId}, whose result is {replayed, skippedAlreadyResolved}. Pending dead '
        + 'letters (not quarantined) dead-lettered before the replay started are re-published for their consumer groups, oldest '
        + 'first, at most EVENTS_DLQ_REPLAY_PER_SECOND (50) a second, and become retrying; resolved ones are counted as skipped. '
        + 'One replay per tenant at a time: while one runs, this answers its job (joined: true). gRPC DLQReplayAll starts or joins '
        + 'the same replay and waits for its result.',
      auth: 'bearer', permission: DEAD_LETTER_RETRY_PERMISSION,
      schemas: { response: { 202: replayAccepted } },
      async handler(ctx) {
        const { jobId, joined } = await startDeadLetterReplay(deps, actorOf(ctx));
        acceptJob(ctx, jobId, { joined });
      },
    }),
    defineRoute<DeadLetterParams>({
      namespace: 'events', method: 'GET', path: '/integrations/dlq/:id', operationId: 'events.dlq.get',
      summary: 'One dead-lettered event: the event, its error, attempts and status',
      description: 'An unknown id and another tenant\'s dead letter are 404 not-found.',
      auth: 'bearer', permission: READ_PERMISSION,
      schemas: { params: deadLetterParams, response: { 200: deadLetter } },
      async handler(ctx) {
        ctx.body = await readDeadLetter(deps, authOf(ctx).tenantId, ctx.guard.params.id);
      },
    }),
    defineRoute<DeadLetterParams>({
      namespace: 'events', method: 'POST', path: '/integrations/dlq/:id/retry', operationId: 'events.dlq.retry',
      summary: 'Re-publishes one dead-lettered event to its original topic for its consumer group',
      description: 'The stored event (same id, key and headers, plus redeliverTo: the consumer group) is re-published to its '
        + 'original topic and the record becomes retrying; the answer is the record. Its group handles it again: resolved when '
        + 'it succeeds, pending again (times_dead_lettered + 1) when it fails. pending and retrying records are re-published, a '
        + 'quarantined one too; resolved or expired is 400 dead-letter-not-retryable (FAILED_PRECONDITION over gRPC). A broker '
        + 'that cannot take it is 503 events-broker-unavailable at once, the record unchanged.',
      auth: 'bearer', permission: DEAD_LETTER_RETRY_PERMISSION,
      schemas: { params: deadLetterParams, response: { 200: deadLetter } },
      async handler(ctx) {
        ctx.body = await retryDeadLetter(deps, actorOf(ctx), ctx.guard.params.id);
      },
    }),
  ];
}
