import type { FieldError } from '../../common/problems';

/**
 * PostgreSQL text and jsonb cannot hold U+0000, and a lone UTF-16 surrogate is not text at all:
 * a request value with either failed deep in a query as a 500 (found by the API fuzzer,
 * test/api/fuzz). The guard refuses them up front as a validation error naming the field, and the
 * OpenAPI documents say so once, for every string (api/openapi/document.ts).
 */
// eslint-disable-next-line no-control-regex -- U+0000 is the very character refused
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const UNSTORABLE_TEXT_RULE = 'Text never contains U+0000 or a lone UTF-16 surrogate (PostgreSQL cannot store them); a request with one is a validation-error.';

/**
 * One error per string (object key or value, at any depth) that cannot be stored, named as joi's
 * errors are (`items[0].name`; the request part itself for a bare value).
 */
export function unstorableTextErrors(value: unknown, source: string, path = ''): FieldError[] {
  if (typeof value === 'string') {
    const field = path || source;
    return UNSTORABLE.test(value) ? [{ field, code: 'INVALID_FORMAT', message: `${field} contains U+0000 or a lone UTF-16 surrogate` }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((item, index) => unstorableTextErrors(item, source, `${path}[${index}]`));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => {
      const field = path ? `${path}.${key}` : key;
      return [...unstorableTextErrors(key, source, field), ...unstorableTextErrors(item, source, field)];
    });
  }
  return [];
}
