import { pageRequestOf } from '../../../common/pagination';
import type { WebhookDeps } from '../../../services/events/webhooks/deps';
import { sendTestEvent, WEBHOOKS_MANAGE_PERMISSION } from '../../../services/events/webhooks/deliveries';
import {
  changeEndpoint, createEndpoint, listAttempts, listEndpoints, readEndpoint, removeEndpoint, rotateEndpointSecret,
} from '../../../services/events/webhooks/endpoints';
import { authOf } from '../../context';
import { acceptJob } from '../../http/job-accepted';
import { defineRoute, feeds, type AnyRoute } from '../../http/route-registry';
import { callerOf } from '../caller';
import {
  attemptPage, createEndpointBody, endpoint, endpointListQuery, endpointPage, endpointParams, endpointWithSecret, patchEndpointBody,
  testAccepted, type CreateEndpointBody, type EndpointListQuery, type EndpointParams, type PatchEndpointBody,
} from './webhooks.schemas';

type NoParams = Record<string, never>;

/**
 * Outbound webhooks (issue 35): a tenant's endpoints, which receive its events signed as Standard
 * Webhooks says, their secrets, their delivery attempts and a test delivery. Every route needs
 * webhooks.manage (owner and admin); another tenant's endpoint is 404 not-found.
 * services/events/webhooks/ has the rules; docs/decisions/events.md, Outbound webhooks, the choices.
 */
export function webhookEndpointRoutes(deps: WebhookDeps): AnyRoute[] {
  const common = { namespace: 'events', auth: 'bearer', permission: WEBHOOKS_MANAGE_PERMISSION } as const;
  return [
    defineRoute<NoParams, NoParams, CreateEndpointBody>({
      ...common, method: 'POST', path: '/webhooks/endpoints', operationId: 'events.webhooks.create',
      summary: 'Creates an endpoint that receives the tenant\'s events of the types it names',
      description: 'eventTypes are exact types or prefixes ending in `.*`. The answer carries the signing secret `whsec_<base64 key>`. '
        + 'Each matching event is POSTed as {id, type, timestamp, data} with the headers webhook-id, webhook-timestamp and '
        + 'webhook-signature (Standard Webhooks); a 2xx answer within 15 s delivers it, anything else is retried after 5 s, 5 min, '
        + '30 min, 2 h, 5 h, 10 h and 10 h under the same webhook-id, then dead-lettered under the consumer group webhooks.<id>. '
        + 'A refused URL is 400 webhook-url-not-allowed.',
      schemas: {
        body: createEndpointBody, response: { 201: endpointWithSecret },
        links: {
          201: feeds([
            'events.webhooks.get', 'events.webhooks.update', 'events.webhooks.delete', 'events.webhooks.rotate-secret',
            'events.webhooks.attempts', 'events.webhooks.test',
          ]),
        },
      },
      async handler(ctx) {
        ctx.body = await createEndpoint(deps, callerOf(ctx), ctx.guard.body);
        ctx.status = 201;
      },
    }),
    defineRoute<NoParams, EndpointListQuery>({
      ...common, method: 'GET', path: '/webhooks/endpoints', operationId: 'events.webhooks.list',
      summary: 'The tenant\'s webhook endpoints, oldest first (without their secrets)',
      description: 'page_size/page_token answer {data, next_page_token}, limit/cursor answer {data, meta {cursor, hasMore}}; 1 to 100, default 20.',
      schemas: { query: endpointListQuery, response: { 200: endpointPage } },
      async handler(ctx) {
        ctx.body = await listEndpoints(deps, authOf(ctx).tenantId, pageRequestOf(ctx.guard.query));
      },
    }),
    defineRoute<EndpointParams>({
      ...common, method: 'GET', path: '/webhooks/endpoints/:id', operationId: 'events.webhooks.get',
      summary: 'One webhook endpoint, with its signing secret',
      schemas: { params: endpointParams, response: { 200: endpointWithSecret } },
      async handler(ctx) {
        ctx.body = await readEndpoint(deps, authOf(ctx).tenantId, ctx.guard.params.id);
      },
    }),
    defineRoute<EndpointParams, NoParams, PatchEndpointBody>({
      ...common, method: 'PATCH', path: '/webhooks/endpoints/:id', operationId: 'events.webhooks.update',
      summary: 'Changes an endpoint\'s url, eventTypes, description or enabled',
      description: 'A new url is checked as at creation. enabled: true turns the endpoint on again and clears its failing streak.',
      schemas: { params: endpointParams, body: patchEndpointBody, response: { 200: endpoint } },
      async handler(ctx) {
        ctx.body = await changeEndpoint(deps, callerOf(ctx), ctx.guard.params.id, ctx.guard.body);
      },
    }),
    defineRoute<EndpointParams>({
      ...common, method: 'DELETE', path: '/webhooks/endpoints/:id', operationId: 'events.webhooks.delete',
      summary: 'Deletes an endpoint and its attempts; deliveries under way stop at their next attempt',
      schemas: { params: endpointParams, response: { 204: null } },
      async handler(ctx) {
        await removeEndpoint(deps, callerOf(ctx), ctx.guard.params.id);
        ctx.status = 204;
      },
    }),
    defineRoute<EndpointParams>({
      ...common, method: 'POST', path: '/webhooks/endpoints/:id/rotate-secret', operationId: 'events.webhooks.rotate-secret',
      summary: 'Gives the endpoint a new signing secret; the old one keeps signing beside it for 24 h',
      description: 'For 24 hours webhook-signature carries two `v1,` signatures separated by a space, one per secret, so a receiver '
        + 'that still knows the old secret accepts the messages while it is given the new one. A second rotation within those 24 h '
        + 'drops the oldest secret.',
      schemas: { params: endpointParams, response: { 200: endpointWithSecret } },
      async handler(ctx) {
        ctx.body = await rotateEndpointSecret(deps, callerOf(ctx), ctx.guard.params.id);
      },
    }),
    defineRoute<EndpointParams, EndpointListQuery>({
      ...common, method: 'GET', path: '/webhooks/endpoints/:id/attempts', operationId: 'events.webhooks.attempts',
      summary: 'The endpoint\'s delivery attempts, newest first',
      description: 'status pending while a request is under way; failed ones carry nextAttemptAt while a retry is due.',
      schemas: { params: endpointParams, query: endpointListQuery, response: { 200: attemptPage } },
      async handler(ctx) {
        ctx.body = await listAttempts(deps, authOf(ctx).tenantId, ctx.guard.params.id, pageRequestOf(ctx.guard.query));
      },
    }),
    defineRoute<EndpointParams>({
      ...common, method: 'POST', path: '/webhooks/endpoints/:id/test', operationId: 'events.webhooks.test',
      summary: 'Sends a webhook.test event to the endpoint now, as a job',
      description: '202 with the job; Location: /v1/jobs/{jobId}, whose result is {status: delivered or failed, attempts, responseStatus}. '
        + 'The event goes to this endpoint only, whatever its eventTypes and whether it is enabled, and is tried once.',
      schemas: { params: endpointParams, response: { 202: testAccepted } },
      async handler(ctx) {
        const { jobId, eventId } = await sendTestEvent(deps, authOf(ctx).tenantId, ctx.guard.params.id);
        acceptJob(ctx, jobId, { eventId });
      },
    }),
  ];
}
