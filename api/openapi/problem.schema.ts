import Joi from 'joi';

/**
 * The problem object of docs/reference/conventions.md#rule-15 as a joi schema: documented once here and referenced by every
 * operation's error responses.
 */
export const fieldErrorSchema = Joi.object({
  field: Joi.string().required(),
  message: Joi.string().required(),
  code: Joi.string().required().example('INVALID_FORMAT'),
});

export const problemSchema = Joi.object({
  type: Joi.string().uri().required().example('https://problems.platform.local/validation-error')
    .description('Stable error class: {problem_base}/<suffix>; clients match on it'),
  title: Joi.string().required(),
  status: Joi.number().integer().required(),
  detail: Joi.string().required(),
  instance: Joi.string().required().description('Request path'),
  traceId: Joi.string().required().description('W3C trace id of the request, as in its log lines'),
  errors: Joi.array().items(fieldErrorSchema).description('Validation errors only'),
  retryAfter: Joi.number().integer().description('429 only: seconds to wait'),
  limit: Joi.object({
    resource: Joi.string(),
    allowed: Joi.number().integer(),
    current: Joi.number().integer(),
    planId: Joi.string(),
  }).description('plan-limit-exceeded only'),
}).unknown(true);
