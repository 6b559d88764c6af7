import Joi from 'joi';
import { fieldErrorsOf } from '../../../api/http/field-errors';
import { pageQuery, cursorQuery } from '../../../api/http/pagination';

const options: Joi.ValidationOptions = { abortEarly: false, convert: true, allowUnknown: false, errors: { wrap: { label: false } } };

function errorsFor(schema: Joi.Schema, value: unknown, source = 'body') {
  const { error } = schema.validate(value, options);
  if (!error) throw new Error('expected a validation error');
  return fieldErrorsOf(error, source);
}

describe('joi errors → problem errors[]', () => {
  const schema = Joi.object({
    email: Joi.string().email({ tlds: { allow: false } }).required(),
    password: Joi.string().min(12).max(64),
    age: Joi.number().integer().min(0).max(150),
    role: Joi.string().valid('owner', 'admin', 'member'),
    tags: Joi.array().items(Joi.string().max(3)),
    id: Joi.string().guid(),
  });

  it.each([
    ['a missing required field', {}, 'email', 'REQUIRED'],
    ['an empty required string', { email: '' }, 'email', 'REQUIRED'],
    ['a malformed e-mail', { email: 'nope' }, 'email', 'INVALID_FORMAT'],
    ['a malformed uuid', { email: 'a@b.test', id: 'x' }, 'id', 'INVALID_FORMAT'],
    ['a string too short', { email: 'a@b.test', password: 'short' }, 'password', 'TOO_SHORT'],
    ['a string too long', { email: 'a@b.test', password: 'x'.repeat(65) }, 'password', 'TOO_LONG'],
    ['a number out of range', { email: 'a@b.test', age: 151 }, 'age', 'OUT_OF_RANGE'],
    ['a string where a number belongs', { email: 'a@b.test', age: 'old' }, 'age', 'INVALID_TYPE'],
    ['a fraction where an integer belongs', { email: 'a@b.test', age: 1.5 }, 'age', 'INVALID_TYPE'],
    ['a number where a string belongs', { email: 42 }, 'email', 'INVALID_TYPE'],
    ['a value outside the allowed set', { email: 'a@b.test', role: 'root' }, 'role', 'INVALID_VALUE'],
    ['an unknown field', { email: 'a@b.test', nickname: 'x' }, 'nickname', 'UNKNOWN_FIELD'],
    // A field is never empty (problem.schema.ts): a key named '' is named by its request part.
    ['an unknown field named ""', { email: 'a@b.test', '': 'x' }, 'body', 'UNKNOWN_FIELD'],
    ['an array element too long', { email: 'a@b.test', tags: ['ok', 'toolong'] }, 'tags[1]', 'TOO_LONG'],
  ])('%s', (_case, value, field, code) => {
    expect(errorsFor(schema, value)).toEqual([{ field, code, message: expect.any(String) }]);
  });

  it('reports every failure at once, with readable messages', () => {
    const errors = errorsFor(schema, { email: 'nope', age: -1, extra: true });
    expect(errors.map((e) => [e.field, e.code])).toEqual([
      ['email', 'INVALID_FORMAT'], ['age', 'OUT_OF_RANGE'], ['extra', 'UNKNOWN_FIELD'],
    ]);
    expect(errors[2].message).toBe('extra is not allowed');
  });

  it('names nested fields by their path', () => {
    const nested = Joi.object({ address: Joi.object({ lines: Joi.array().items(Joi.object({ text: Joi.string().required() })) }) });
    expect(errorsFor(nested, { address: { lines: [{ text: 'a' }, {}] } })[0].field).toBe('address.lines[1].text');
  });

  it('names the request part itself when the whole part is wrong', () => {
    expect(errorsFor(Joi.object({ a: Joi.string() }).required(), undefined, 'body')).toEqual([
      { field: 'body', code: 'REQUIRED', message: 'value is required' },
    ]);
  });
});

describe('pagination query', () => {
  const pages = Joi.object(pageQuery);
  const cursors = Joi.object(cursorQuery);

  it('defaults page_size to 20 and limit to 20', () => {
    expect(pages.validate({}, options).value).toEqual({ page_size: 20 });
    expect(cursors.validate({}, options).value).toEqual({ limit: 20 });
  });

  it('accepts 100 and refuses 101 instead of capping it', () => {
    expect(pages.validate({ page_size: '100' }, options).value).toEqual({ page_size: 100 });
    expect(errorsFor(pages, { page_size: '101' }, 'query')).toEqual([
      { field: 'page_size', code: 'OUT_OF_RANGE', message: expect.stringContaining('100') },
    ]);
    expect(errorsFor(cursors, { limit: '101' }, 'query')[0]).toMatchObject({ field: 'limit', code: 'OUT_OF_RANGE' });
  });

  it('refuses a page_token that is not base64', () => {
    expect(pages.validate({ page_token: 'eyJpZCI6MX0' }, options).error).toBeUndefined();
    expect(errorsFor(pages, { page_token: 'not base64!' }, 'query')[0]).toMatchObject({ field: 'page_token', code: 'INVALID_FORMAT' });
  });
});
