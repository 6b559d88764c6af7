import Joi from 'joi';
import { toJsonSchema } from '../../../api/openapi/json-schema';
import { unstorableTextErrors } from '../../../api/http/storable-text';
import { PROTOTYPE_KEY_RULE, toProblem } from '../../../api/http/to-problem';

/**
 * What the guard refuses, the OpenAPI documents must say (found by the API fuzzer,
 * test/api/fuzz): the joi rules joi-to-json leaves out, and the rules stated for every request.
 */
describe('joi rules in the published JSON Schema', () => {
  it('gives a string that refuses "" a minLength of 1, and leaves one that allows it alone', () => {
    expect(toJsonSchema(Joi.string().max(40))).toMatchObject({ type: 'string', minLength: 1, maxLength: 40 });
    expect(toJsonSchema(Joi.string().allow(''))).not.toHaveProperty('minLength');
    expect(toJsonSchema(Joi.string().empty(''))).not.toHaveProperty('minLength');
    expect(toJsonSchema(Joi.string().min(3))).toMatchObject({ minLength: 3 });
  });

  it('asks a trimmed string that may not be empty for a non-blank character', () => {
    expect(toJsonSchema(Joi.string().trim().max(100))).toMatchObject({ minLength: 1, pattern: '\\S' });
    expect(toJsonSchema(Joi.string().trim().pattern(/^[a-z ]+$/))).toMatchObject({ pattern: '^[a-z ]+$', allOf: [{ pattern: '\\S' }] });
    expect(toJsonSchema(Joi.string().trim().allow(''))).not.toHaveProperty('pattern');
  });

  it('names the UUID versions a guid accepts in a pattern the guard agrees with', () => {
    const schema = Joi.string().guid({ version: ['uuidv4', 'uuidv7'] });
    const pattern = new RegExp(toJsonSchema(schema).pattern as string);
    for (const id of ['0190f6a2-3c4d-7e5f-8a9b-0c1d2e3f4a5b', '6249ebc7-de05-4bb2-a3ce-e433b34c9feb', 'e3e70682-c209-1cac-a29f-6fbed82c07cd']) {
      expect(pattern.test(id)).toBe(schema.validate(id).error === undefined);
    }
    expect(toJsonSchema(Joi.string().uuid())).not.toHaveProperty('pattern');
  });

  it('bounds a number by the safe integers joi keeps to, where no rule bounds it closer', () => {
    // Found by `npm run fuzz`: PATCH /billing/subscriptions/{id} with version 3e23, valid by a
    // document that set no maximum, was refused as version must be a safe number.
    const version = Joi.number().integer().min(1);
    expect(toJsonSchema(version)).toMatchObject({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
    expect(version.validate(Number.MAX_SAFE_INTEGER).error).toBeUndefined();
    expect(version.validate(3e23).error?.details[0].type).toBe('number.unsafe');
    expect(toJsonSchema(Joi.number())).toMatchObject({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });
    expect(toJsonSchema(Joi.number().min(0).max(100))).toMatchObject({ minimum: 0, maximum: 100 });
    expect(toJsonSchema(Joi.number().unsafe())).not.toHaveProperty('maximum');
  });

  it('counts an object’s keys as joi does', () => {
    expect(toJsonSchema(Joi.object({ a: Joi.string(), b: Joi.string() }).min(1).max(2))).toMatchObject({ minProperties: 1, maxProperties: 2 });
  });

  it('lets an object keyed by a schema have keys, each key and value checked as joi checks them', () => {
    expect(toJsonSchema(Joi.object().pattern(Joi.string(), Joi.string().uri()))).toMatchObject({
      type: 'object', additionalProperties: { type: 'string', format: 'uri' },
    });
    expect(toJsonSchema(Joi.object().pattern(Joi.string().pattern(/^[a-z]+$/), Joi.number()))).toMatchObject({
      propertyNames: { type: 'string', pattern: '^[a-z]+$' }, additionalProperties: { type: 'number' },
    });
    expect(toJsonSchema(Joi.object({ a: Joi.number() }))).toMatchObject({ additionalProperties: false });
  });
});

describe('rules stated for every request', () => {
  it('refuses text PostgreSQL cannot store, naming each field', () => {
    expect(unstorableTextErrors({ name: 'a\u0000b', tags: ['ok', '\uD800'], ['k\u0000']: 1, fine: 'é😀' }, 'body').map((e) => e.field))
      .toEqual(['name', 'tags[1]', 'k\u0000']);
    expect(unstorableTextErrors('x\u0000', 'query')).toEqual([{ field: 'query', code: 'INVALID_FORMAT', message: expect.any(String) }]);
  });

  it('answers a prototype-polluting key with its own validation error, not "not valid JSON"', () => {
    const refused = Object.assign(new SyntaxError('Object contains forbidden prototype property'), { status: 400 });
    expect(toProblem(refused)).toMatchObject({ type: 'validation-error', detail: PROTOTYPE_KEY_RULE });
  });
});
