import Joi from 'joi';
import type { EitherPageQuery } from '../../../common/pagination';
import { DEAD_LETTER_STATUSES, type DeadLetterStatus } from '../../../services/events/dead-letters/views';
import { EVENT_TYPE_PATTERN } from '../../../services/events/event-rules';
import { uuid } from '../../http/ids';
import { eitherPageOf, eitherPageOnly, eitherPageQuery } from '../../http/pagination';

/**
 * Request and response schemas of the dead-letter routes (docs/reference/events.md#resources: GET
 * /integrations/dlq and POST /integrations/dlq/:id/retry; the DLQRecord of
 * protos/platform/events/v1/events.proto in snake_case).
 */

export interface DeadLetterParams {
  id: string;
}

export const deadLetterParams = Joi.object<DeadLetterParams>({
  id: uuid.required().description('The dead letter\'s id (the `id` of its record), not the event id'),
});

export interface DeadLetterListQuery extends EitherPageQuery {
  status?: DeadLetterStatus;
  consumer_group?: string;
  event_type?: string;
}

export const deadLetterListQuery = eitherPageOnly(Joi.object<DeadLetterListQuery>({
  status: Joi.string().valid(...DEAD_LETTER_STATUSES),
  consumer_group: Joi.string().min(3).max(200).pattern(/^[a-z0-9][a-z0-9._-]*$/, 'consumer group')
    .description('The Kafka group id as the records show it: `<service>.<handler>`, or `tenant.<tenantId>.<group>` for a subscription'),
  event_type: Joi.string().max(200).pattern(EVENT_TYPE_PATTERN, 'event type').description('`<domain>.<entity>.<action>`'),
  ...eitherPageQuery,
}));

const instant = Joi.string().isoDate();

const originalEvent = Joi.object({
  event_id: Joi.string().required(),
  event_type: Joi.string().required(),
  source: Joi.string().allow('').required(),
  tenant_id: Joi.string().required(),
  schema_version: Joi.string().allow('').required(),
  timestamp: instant.required(),
  trace_id: Joi.string().allow(null).required(),
  correlation_id: Joi.string().allow(null).required(),
  payload: Joi.object().unknown(true).required().description('The event\'s data, as it was published'),
  entity_id: Joi.string().allow('').required().description('The partition key it was published with'),
}).description('The EventEnvelope of platform.events.v1');

export const deadLetter = Joi.object({
  id: Joi.string().required(),
  original_event: originalEvent.required(),
  attempt_count: Joi.number().integer().min(1).required().description('Attempts of the handler before the event was dead-lettered'),
  last_error: Joi.string().allow('').required(),
  dlq_timestamp: instant.required().description('When the group first dead-lettered the event'),
  consumer_group: Joi.string().required(),
  status: Joi.string().valid(...DEAD_LETTER_STATUSES).required(),
  times_dead_lettered: Joi.number().integer().min(1).required().description('How often this group dead-lettered the event (retries that failed again)'),
  quarantined: Joi.boolean().required().description('Dead-lettered too often: replay-all leaves it alone; an explicit retry still works'),
  topic: Joi.string().required(),
  partition: Joi.number().integer().min(0).required(),
  offset: Joi.number().integer().min(0).required(),
  updated_at: instant.required(),
  resolved_at: instant.allow(null).required(),
  expires_at: instant.required().description('When an open dead letter expires (EVENTS_DLQ_RETENTION_HOURS after its last dead-lettering)'),
});

export const deadLetterPage = eitherPageOf(deadLetter);

/** The 202 of POST /integrations/dlq/replay. */
export const replayAccepted = Joi.object({
  jobId: Joi.string().required(),
  joined: Joi.boolean().required().description('true: a replay of the tenant was running already, and this is its job'),
});

/** A completed replay job's result (GET /v1/jobs/{jobId}, kind events-dlq-replay): DLQReplayAllResponse in the jobs\' camelCase. */
export const replayResult = Joi.object({
  replayed: Joi.number().integer().min(0).required(),
  skippedAlreadyResolved: Joi.number().integer().min(0).required(),
});
