import Joi from 'joi';
import { problems } from '../../../common/problems';
import { EVENT_TYPE_PATTERN, SCHEMA_VERSION_PATTERN } from '../../../services/events/event-rules';
import type { PublishRequest } from '../../../services/events/publishing';
import { topicNames } from '../../../services/events/topics';
import { uuid } from '../../http/ids';

/** Request and response schemas of REST publishing (docs/reference/events.md#rule-11; camelCase). */

/** A malformed version is 400 invalid-schema-version (docs/reference/events.md#rule-7), not a validation-error. */
const schemaVersion = Joi.string().max(50).pattern(SCHEMA_VERSION_PATTERN, 'semantic version')
  .description('Semantic version of the payload schema (default 1.0.0): the major version of the registered schema, not newer than it.')
  .error((errors) => problems.invalidSchemaVersion(`schemaVersion must be a semantic version such as 1.0.0 (${errors[0]?.message ?? 'invalid'})`));

export const publishBody = Joi.object<PublishRequest>({
  type: Joi.string().max(200).pattern(EVENT_TYPE_PATTERN, 'event type').required()
    .description('`<module>.<entity>.<action>`: a type the module declares in its manifest’s events.publishes.'),
  data: Joi.object().unknown(true).required()
    .description('The payload, matching the type’s registered schema; at most 1 MB serialized. tenantId / tenant_id are set from the token.'),
  schemaVersion,
});

export const publishedEvent = Joi.object({
  eventId: uuid.required(),
  type: Joi.string().required(),
  topic: Joi.string().valid(...topicNames).required(),
  partition: Joi.number().integer().min(0).required(),
  offset: Joi.number().integer().min(0).required(),
});
