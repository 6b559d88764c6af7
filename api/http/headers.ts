import Joi from 'joi';

/**
 * The request headers routes declare (RouteSchemas.headers), written once so every route that takes
 * one checks, documents and reads it alike.
 */

/**
 * docs/reference/conventions.md#rule-20: `Idempotency-Key: <uuid>`, UUID v4 or v7. A pattern, not joi's uuid(): the
 * OpenAPI documents then state the versions too, so a key valid by the document is never refused.
 */
const idempotencyKey = Joi.string()
  .pattern(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[47][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/, 'UUID v4 or v7')
  .description('UUID v4 or v7. The same key and body answer the same result; the same key with another body is 409 idempotency-conflict.');

export interface IdempotencyHeaders {
  'Idempotency-Key': string;
}

/** Money mutations (docs/reference/money.md#rule-2): a missing or malformed key is 400 validation-error. */
export const idempotencyHeaders = Joi.object<IdempotencyHeaders>({ 'Idempotency-Key': idempotencyKey.required() });

/** A creation that moves no money honours a key when one is sent. */
export const optionalIdempotencyHeaders = Joi.object<Partial<IdempotencyHeaders>>({ 'Idempotency-Key': idempotencyKey });
