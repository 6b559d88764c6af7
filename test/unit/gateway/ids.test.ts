import { tenantId, uuid, uuidV4OrV7 } from '../../../api/http/ids';
import { toJsonSchema } from '../../../api/openapi/json-schema';

/**
 * The ids requests carry (issue 15): one spelling, the one PostgreSQL's uuid type reads and the
 * documents publish, where joi's bare uuid() also took wrappers and other separators. Each row:
 * a form, whether `uuid` (any version) takes it, whether `uuidV4OrV7` (= `tenantId`) takes it.
 */
const V7 = '0192f0a4-1b2c-7d3e-8f40-123456789abc';

const forms: [string, string, boolean, boolean][] = [
  ['a v7, lower case', V7, true, true],
  ['a v7, upper case', V7.toUpperCase(), true, true],
  ['a v4', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', true, true],
  ['a v3 (another version)', 'e2bc1114-2734-327b-ad8d-cd4e3cf83276', true, false],
  ['the nil UUID', '00000000-0000-0000-0000-000000000000', true, false],
  ['a v7 with a variant other than RFC 9562', '0192f0a4-1b2c-7d3e-cf40-123456789abc', true, false],
  ['braces', `{${V7}}`, false, false],
  ['brackets', `[${V7}]`, false, false],
  ['parentheses', `(${V7})`, false, false],
  [': separators', V7.replaceAll('-', ':'), false, false],
  ['no separators', V7.replaceAll('-', ''), false, false],
  ['a urn:uuid: prefix', `urn:uuid:${V7}`, false, false],
  ['a leading space', ` ${V7}`, false, false],
  ['a trailing newline', `${V7}\n`, false, false],
  ['a digit short', V7.slice(1), false, false],
  ['a non-hex digit', `g${V7.slice(1)}`, false, false],
  ['an empty string', '', false, false],
];

describe('request ids', () => {
  it.each(forms)('%s: %j', (_case, value, anyVersion, v4OrV7) => {
    expect(uuid.validate(value).error === undefined).toBe(anyVersion);
    expect(uuidV4OrV7.validate(value).error === undefined).toBe(v4OrV7);
    expect(tenantId.validate(value).error === undefined).toBe(v4OrV7);
  });
});

/** The documents state what the guard takes, so a request valid by the document is not refused. */
describe('request ids in the OpenAPI documents', () => {
  // JSON Schema's `uuid` format: RFC 9562's string form, 8-4-4-4-12 hex digits.
  const uuidFormat = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

  it('publishes any version as format uuid, with no pattern', () => {
    expect(toJsonSchema(uuid)).toEqual({ type: 'string', format: 'uuid', minLength: 1 });
    for (const [, value, anyVersion] of forms) expect(uuidFormat.test(value)).toBe(anyVersion);
  });

  it('publishes v4 or v7 as format uuid and a pattern without flags that agrees with the guard', () => {
    const schema = toJsonSchema(uuidV4OrV7);
    expect(schema).toMatchObject({ type: 'string', format: 'uuid', pattern: expect.any(String) });
    // Read both ways JSON Schema tools compile a pattern: with the u flag and without.
    for (const flags of ['', 'u']) {
      const pattern = new RegExp(String(schema.pattern), flags);
      for (const [, value, , v4OrV7] of forms) expect(pattern.test(value) && uuidFormat.test(value)).toBe(v4OrV7);
    }
  });
});
