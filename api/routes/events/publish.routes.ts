import { authOf } from '../../context';
import { MAX_EVENT_DATA_BYTES } from '../../../services/events/event-rules';
import { publishEvent, type EventPublishingDeps, type PublishRequest } from '../../../services/events/publishing';
import { optionalIdempotencyHeaders, type IdempotencyHeaders } from '../../http/headers';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { publishBody, publishedEvent } from './publish.schemas';

type NoParams = Record<string, never>;

/**
 * REST publishing (docs/reference/events.md#rule-11): a module's event, published for the caller's tenant. The refusals
 * and their order are services/events/publishing.ts's; docs/decisions/events.md has the choices.
 */
export function eventPublishRoutes(deps: EventPublishingDeps): AnyRoute[] {
  return [
    defineRoute<NoParams, NoParams, PublishRequest, Partial<IdempotencyHeaders>>({
      namespace: 'events', method: 'POST', path: '/events/publish', operationId: 'events.publish',
      summary: 'Publishes an event of a module installed for the tenant',
      description: 'The module is the type’s first segment; it must be installed and declare the type in events.publishes '
        + '(403 event-not-declared); kernel namespaces auth., money., billing., audit., module.registry. are 403 '
        + 'event-topic-protected. data must match the type’s registered schema (400 validation-error) and serialize to at '
        + 'most 1 MB (400 event-payload-too-large); a malformed or unknown schemaVersion is 400 invalid-schema-version. '
        + 'The answer names the partition and offset Kafka stored the event at; a broker that cannot take it is 503 '
        + 'events-broker-unavailable at once (nothing is buffered). With an Idempotency-Key (kept 24 hours) the same key '
        + 'and body answer 200 with the original body, another body 409.',
      auth: 'bearer', permission: 'events.publish',
      // The 1 MB payload rule is the service's (EVENT_PAYLOAD_TOO_LARGE); the body around it may be larger.
      bodyLimitBytes: 2 * MAX_EVENT_DATA_BYTES,
      schemas: { headers: optionalIdempotencyHeaders, body: publishBody, response: { 200: publishedEvent, 201: publishedEvent } },
      async handler(ctx) {
        const publisher = { tenantId: authOf(ctx).tenantId, traceId: ctx.state.traceId };
        const result = await publishEvent(deps, publisher, ctx.guard.body, ctx.guard.headers['Idempotency-Key']);
        ctx.status = result.statusCode;
        ctx.body = result.body;
      },
    }),
  ];
}
