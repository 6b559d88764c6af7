import Joi from 'joi';
import type { EitherPageQuery } from '../../../common/pagination';
import { EVENT_TYPE_PATTERN } from '../../../services/events/event-rules';
import { WEBHOOK_ATTEMPT_STATUSES } from '../../../services/events/webhooks/endpoints';
import { EVENT_TYPE_PREFIX_PATTERN } from '../../../services/events/webhooks/matching';
import { uuid } from '../../http/ids';
import { eitherPageOf, eitherPageOnly, eitherPageQuery } from '../../http/pagination';

/** Request and response schemas of the outbound webhook routes (issue 35; services/events/webhooks/). */

export interface EndpointParams {
  id: string;
}

export const endpointParams = Joi.object<EndpointParams>({
  id: uuid.required().description('The endpoint\'s id'),
});

const selector = Joi.string().max(200)
  .pattern(new RegExp(`${EVENT_TYPE_PATTERN.source}|${EVENT_TYPE_PREFIX_PATTERN.source}`), 'event type or prefix.*')
  .description('An event type (`auth.user.created`) or a prefix ending in `.*` (`auth.*`, `auth.user.*`)');

const eventTypes = Joi.array().items(selector).min(1).max(50);

const url = Joi.string().max(2048).uri({ scheme: ['http', 'https'] })
  .description('An absolute URL whose host is an IP address or a DNS name (at most 253 characters, labels of at most 63). '
    + 'https; plain http only in development (or to loopback where WEBHOOKS_ALLOW_LOOPBACK allows it). Loopback, private and '
    + 'link-local targets are 400 webhook-url-not-allowed, here and again at every delivery after DNS resolution.');

const description = Joi.string().max(500).allow('');

export interface CreateEndpointBody {
  url: string;
  eventTypes: string[];
  description?: string;
}

export const createEndpointBody = Joi.object<CreateEndpointBody>({
  url: url.required(),
  eventTypes: eventTypes.required(),
  description,
});

export interface PatchEndpointBody {
  url?: string;
  eventTypes?: string[];
  description?: string;
  enabled?: boolean;
}

export const patchEndpointBody = Joi.object<PatchEndpointBody>({
  url, eventTypes, description,
  enabled: Joi.boolean().description('true turns an endpoint on again, also one the platform turned off after 5 days of failures'),
}).min(1);

const instant = Joi.string().isoDate();

export const endpoint = Joi.object({
  id: Joi.string().required(),
  url: Joi.string().required(),
  eventTypes: Joi.array().items(Joi.string()).required(),
  description: Joi.string().allow('').required(),
  enabled: Joi.boolean().required(),
  disabledReason: Joi.string().valid('failing').allow(null).required()
    .description('`failing`: the platform turned the endpoint off after 5 days of failed deliveries'),
  failingSince: instant.allow(null).required().description('The first failed attempt since the last delivered one'),
  createdAt: instant.required(),
  updatedAt: instant.required(),
});

export const endpointWithSecret = endpoint.keys({
  secret: Joi.string().pattern(/^whsec_[A-Za-z0-9+/]+=*$/).required()
    .description('`whsec_<base64 key>`: the Standard Webhooks signing secret'),
});

export type EndpointListQuery = EitherPageQuery;

export const endpointListQuery = eitherPageOnly(Joi.object<EndpointListQuery>({ ...eitherPageQuery }));

export const endpointPage = eitherPageOf(endpoint);

export const attempt = Joi.object({
  id: Joi.string().required(),
  eventId: Joi.string().required(),
  eventType: Joi.string().required(),
  attempt: Joi.number().integer().min(1).required().description('1 for the first request of the event, up to 8'),
  status: Joi.string().valid(...WEBHOOK_ATTEMPT_STATUSES).required(),
  responseStatus: Joi.number().integer().allow(null).required().description('null: no answer (a timeout, a refused address)'),
  durationMs: Joi.number().integer().min(0).allow(null).required(),
  error: Joi.string().allow(null).required(),
  attemptedAt: instant.required(),
  nextAttemptAt: instant.allow(null).required().description('When the next attempt is due after this failed one; null after the last'),
});

export const attemptPage = eitherPageOf(attempt);

/** The 202 of POST /webhooks/endpoints/{id}/test. */
export const testAccepted = Joi.object({
  jobId: Joi.string().required(),
  eventId: Joi.string().required().description('The id of the webhook.test event: its webhook-id header'),
});

/** A completed test job's result (GET /v1/jobs/{jobId}, kind webhook-test). */
export const testResult = Joi.object({
  status: Joi.string().valid('delivered', 'failed', 'dead-lettered', 'endpoint-gone').required(),
  attempts: Joi.number().integer().min(0).required(),
  responseStatus: Joi.number().integer().allow(null).required(),
});
