import type { ValidationError, ValidationErrorItem } from 'joi';
import type { FieldError } from '../../common/problems';

/**
 * joi's error types mapped to the codes of the problem object's `errors[]` (docs/reference/conventions.md#rule-9: REQUIRED,
 * INVALID_FORMAT, TOO_SHORT, BREACHED_PASSWORD, ...). Clients branch on these codes, so they are a
 * closed set; a joi type not listed here falls back by its family below.
 */
const CODES: Record<string, string> = {
  'any.required': 'REQUIRED',
  'string.empty': 'REQUIRED',
  'object.unknown': 'UNKNOWN_FIELD',
  'any.unknown': 'UNKNOWN_FIELD',
  'object.missing': 'REQUIRED',
  'object.and': 'REQUIRED',
  'object.with': 'REQUIRED',
  'object.xor': 'CONFLICTING_FIELDS',
  'object.oxor': 'CONFLICTING_FIELDS',
  'object.nand': 'CONFLICTING_FIELDS',
  'object.without': 'CONFLICTING_FIELDS',
  'string.min': 'TOO_SHORT',
  'string.length': 'INVALID_LENGTH',
  'array.min': 'TOO_SHORT',
  'array.length': 'INVALID_LENGTH',
  'object.min': 'TOO_SHORT',
  'string.max': 'TOO_LONG',
  'array.max': 'TOO_LONG',
  'object.max': 'TOO_LONG',
  'number.min': 'OUT_OF_RANGE',
  'number.max': 'OUT_OF_RANGE',
  'number.greater': 'OUT_OF_RANGE',
  'number.less': 'OUT_OF_RANGE',
  'number.positive': 'OUT_OF_RANGE',
  'number.negative': 'OUT_OF_RANGE',
  'number.port': 'OUT_OF_RANGE',
  'number.unsafe': 'OUT_OF_RANGE',
  'number.infinity': 'OUT_OF_RANGE',
  'date.min': 'OUT_OF_RANGE',
  'date.max': 'OUT_OF_RANGE',
  'date.greater': 'OUT_OF_RANGE',
  'date.less': 'OUT_OF_RANGE',
  'number.integer': 'INVALID_TYPE',
  'number.precision': 'INVALID_FORMAT',
  'number.multiple': 'INVALID_VALUE',
  'any.only': 'INVALID_VALUE',
  'any.invalid': 'INVALID_VALUE',
  'array.unique': 'DUPLICATE_VALUE',
  'array.includesRequiredUnknowns': 'REQUIRED',
  // Raised by the new-password schema (api/routes/identity/auth.schemas.ts); docs/reference/identity.md#rule-3 names the code.
  'password.breached': 'BREACHED_PASSWORD',
};

/** `string.base`, `number.base`, ... mean the value has the wrong JSON type. */
function codeFor(type: string): string {
  if (CODES[type]) return CODES[type];
  if (type.endsWith('.base')) return 'INVALID_TYPE';
  // string.email, string.guid, string.pattern.base, string.uri, date.format, ...: the value's shape.
  if (type.startsWith('string.') || type.startsWith('date.') || type.startsWith('binary.')) return 'INVALID_FORMAT';
  return 'INVALID_VALUE';
}

/**
 * `items[0].name` for a path of ['items', 0, 'name']; the request part itself for an empty path,
 * or for a key named '' (problem.schema.ts: a field is never empty).
 */
function fieldOf(path: ValidationErrorItem['path'], source: string): string {
  return path.reduce<string>((field, segment) => (
    typeof segment === 'number' ? `${field}[${segment}]` : field ? `${field}.${segment}` : String(segment)
  ), '') || source;
}

/** The `errors[]` of a validation-error problem for one request part (params, query or body). */
export function fieldErrorsOf(error: ValidationError, source: string): FieldError[] {
  return error.details.map((detail) => ({
    field: fieldOf(detail.path, source),
    message: detail.message,
    code: codeFor(detail.type),
  }));
}
