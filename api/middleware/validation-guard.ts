import { Readable } from 'node:stream';
import Joi from 'joi';
import type { Middleware } from 'koa';
import { isProblem, problems, type FieldError } from '../../common/problems';
import type { AppState } from '../context';
import type { AnyRoute, Guard } from '../http/route-registry';
import { fieldErrorsOf } from '../http/field-errors';
import { unstorableTextErrors } from '../http/storable-text';

/** Unknown fields are refused everywhere (query, params, body), so a typo is an error, not a no-op. */
const REQUEST_OPTIONS: Joi.ValidationOptions = {
  abortEarly: false,
  convert: true,
  allowUnknown: false,
  errors: { wrap: { label: false } },
};

/** A response must already have its declared types: nothing is coerced on the way out. */
const RESPONSE_OPTIONS: Joi.ValidationOptions = { abortEarly: false, convert: false, allowUnknown: false };

const NOTHING = Joi.object({});

/**
 * The declared headers of a request under their declared names, read case-insensitively (HTTP
 * header names are; Node hands them over in lower case). Undeclared headers are not looked at.
 */
function declaredHeaders(names: readonly string[], headers: Record<string, string | string[] | undefined>): Record<string, unknown> {
  return Object.fromEntries(names.flatMap((name) => {
    const value = headers[name.toLowerCase()];
    return value === undefined ? [] : [[name, value]];
  }));
}

function keysOf(schema: Joi.ObjectSchema | undefined): string[] {
  const described = schema?.describe() as { keys?: Record<string, unknown> } | undefined;
  return Object.keys(described?.keys ?? {});
}

/**
 * The guard in the Logto style: the route's own schemas check params, query, the declared headers
 * and body (all failures reported together as errors[]), hand the validated values to the handler as
 * `ctx.guard`, and, where configured (development, staging, test), check the response body
 * against the schema declared for its status, so a handler that drifts from its published
 * schema fails loudly (500) instead of silently breaking clients.
 */
export function validationGuard(route: AnyRoute, validateResponses: boolean): Middleware<AppState> {
  // Preferences are compiled into the schemas once: passed to every validate() call, joi merges
  // them again per call.
  const params = (route.schemas.params ?? NOTHING).prefs(REQUEST_OPTIONS);
  const query = (route.schemas.query ?? NOTHING).prefs(REQUEST_OPTIONS);
  const headers = (route.schemas.headers ?? NOTHING).prefs(REQUEST_OPTIONS);
  const headerNames = keysOf(route.schemas.headers);
  const body = (route.schemas.body?.required() ?? NOTHING).prefs(REQUEST_OPTIONS);

  return async (ctx, next) => {
    const errors: FieldError[] = [];
    const check = (schema: Joi.Schema, value: unknown, source: string): unknown => checkPart(schema, value, source, errors);
    const guard: Guard<unknown, unknown, unknown, unknown> = {
      params: check(params, (ctx as unknown as { params: unknown }).params, 'params'),
      query: check(query, ctx.query, 'query'),
      headers: check(headers, declaredHeaders(headerNames, ctx.headers), 'headers'),
      body: check(body, ctx.request.body, 'body'),
    };
    if (errors.length > 0) throw problems.validation(errors);
    (ctx as unknown as { guard: typeof guard }).guard = guard;

    await next();

    if (validateResponses) checkResponse(route, ctx.status, ctx.body);
  };
}

/**
 * One request part checked as the guard checks it: its value (converted and defaulted) is answered
 * and its failures are added to `errors`, which the caller turns into one validation-error.
 */
function checkPart(schema: Joi.Schema, value: unknown, source: string, errors: FieldError[]): unknown {
  const result = schema.validate(value);
  // A rule whose failure the documents give its own problem type (money's invalid-amount) says so with
  // `.error(() => problems.x())`; joi hands that error back as it is.
  if (isProblem(result.error)) throw result.error;
  if (result.error) errors.push(...fieldErrorsOf(result.error, source));
  else errors.push(...unstorableTextErrors(result.value, source));
  return result.value;
}

/**
 * A request part the handler reads itself (the text fields of a streamed multipart body), checked
 * with the rules of the guard: the value, or the validation-error (or the schema's own problem).
 */
export function validatedPart<T>(schema: Joi.Schema<T>, value: unknown, source: string): T {
  const errors: FieldError[] = [];
  const checked = checkPart(schema.prefs(REQUEST_OPTIONS), value, source, errors);
  if (errors.length > 0) throw problems.validation(errors);
  return checked as T;
}

class ResponseValidationError extends Error {
  constructor(operationId: string, status: number, reason: string) {
    super(`${operationId} answered ${status} with a body that breaks its schema: ${reason}`);
    this.name = 'ResponseValidationError';
  }
}

function checkResponse(route: AnyRoute, status: number, body: unknown): void {
  const declared = route.schemas.response;
  if (!(status in declared)) {
    // Errors leave as thrown problems; a success status the route never declared is a defect.
    if (status < 300) throw problems.internal(new ResponseValidationError(route.operationId, status, 'status not declared'));
    return;
  }
  const schema = declared[status];
  if (!schema) return;
  // A download answers the bytes of a file where the route declared them (RouteSchemas.bytes).
  if (route.schemas.bytes?.[status] && (body instanceof Readable || Buffer.isBuffer(body))) return;
  const { error } = schema.validate(body, RESPONSE_OPTIONS);
  if (error) throw problems.internal(new ResponseValidationError(route.operationId, status, error.message));
}
