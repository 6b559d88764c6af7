import { isProblem, type FieldError } from '../../../common/problems';
import { SYSTEM_FIELDS, type DataField, type DataFieldType, type DataModel } from '../../../db/queries/data/model';
import { checkRecordSize, validateRecord, type RecordLimits } from '../../../services/data/record-validation';

/** A model with one field of every type; `title` is the one required field. */
const own = (name: string, type: DataFieldType, nullable = true): DataField => ({ name, column: name, type, nullable, system: false });
const model: DataModel = {
  module: 'shop', name: 'items', schema: 'mod_shop', table: 'items', relations: [],
  fields: [
    ...SYSTEM_FIELDS,
    own('title', 'text', false), own('count', 'integer'), own('big', 'bigint'), own('price', 'numeric'), own('active', 'boolean'),
    own('ownerId', 'uuid'), own('seenAt', 'timestamptz'), own('day', 'date'), own('meta', 'jsonb'), own('photo', 'file'),
  ],
};
const limits: RecordLimits = { maxRecordSizeBytes: 4096, maxJsonbSizeBytes: 256 };

/** The converted values by field name, or the errors[] of the refusal. */
function check(body: Record<string, unknown>, mode: 'create' | 'update' = 'create'): Record<string, unknown> | FieldError[] {
  try {
    return Object.fromEntries(validateRecord(model, body, mode, limits).fields.map(({ field, value }) => [field.name, value]));
  } catch (error) {
    if (isProblem(error) && error.type === 'validation-error') return error.extensions.errors!;
    throw error;
  }
}

const UUID = '0192f5c4-7e1a-7b3c-9d2e-4f5a6b7c8d9e';

describe('a record body against its model', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['text', { title: 'Lamp' }, { title: 'Lamp' }],
    ['integer at the int4 bounds', { title: 't', count: -2147483648 }, { title: 't', count: -2147483648 }],
    ['bigint as a safe number, as a string', { title: 't', big: 42 }, { title: 't', big: '42' }],
    ['bigint beyond 2^53 as digits', { title: 't', big: '9223372036854775807' }, { title: 't', big: '9223372036854775807' }],
    ['numeric from a number, as an exact string', { title: 't', price: 12.5 }, { title: 't', price: '12.5' }],
    ['numeric string kept digit for digit', { title: 't', price: '0.10000000000000000001' }, { title: 't', price: '0.10000000000000000001' }],
    ['boolean', { title: 't', active: false }, { title: 't', active: false }],
    ['uuid, lower-cased', { title: 't', ownerId: UUID.toUpperCase() }, { title: 't', ownerId: UUID }],
    ['file id', { title: 't', photo: UUID }, { title: 't', photo: UUID }],
    ['timestamptz with Z', { title: 't', seenAt: '2026-01-31T12:00:00Z' }, { title: 't', seenAt: '2026-01-31T12:00:00Z' }],
    ['timestamptz with an offset and microseconds', { title: 't', seenAt: '2026-01-31T12:00:00.123456+02:00' }, { title: 't', seenAt: '2026-01-31T12:00:00.123456+02:00' }],
    ['date, leap day', { title: 't', day: '2028-02-29' }, { title: 't', day: '2028-02-29' }],
    ['jsonb: any JSON value', { title: 't', meta: { tags: ['a', 1, null] } }, { title: 't', meta: { tags: ['a', 1, null] } }],
    ['null for a nullable field', { title: 't', count: null, meta: null }, { title: 't', count: null, meta: null }],
  ])('accepts %s', (_, body, values) => {
    expect(check(body)).toEqual(values);
  });

  it.each<[string, Record<string, unknown>, Partial<FieldError>]>([
    ['a required field missing', {}, { field: 'title', code: 'REQUIRED' }],
    ['null for a required field', { title: null }, { field: 'title', code: 'REQUIRED' }],
    ['an unknown field', { title: 't', colour: 'red' }, { field: 'colour', code: 'UNKNOWN_FIELD' }],
    ['id in a body', { title: 't', id: UUID }, { field: 'id', code: 'UNKNOWN_FIELD', message: expect.stringMatching(/set by the platform/) }],
    ['tenantId in a body', { title: 't', tenantId: UUID }, { field: 'tenantId', code: 'UNKNOWN_FIELD' }],
    ['deletedAt in a body', { title: 't', deletedAt: null }, { field: 'deletedAt', code: 'UNKNOWN_FIELD' }],
    ['a number for text', { title: 5 }, { field: 'title', code: 'INVALID_TYPE' }],
    ['a string for integer', { title: 't', count: '5' }, { field: 'count', code: 'INVALID_TYPE' }],
    ['a fraction for integer', { title: 't', count: 1.5 }, { field: 'count', code: 'INVALID_TYPE' }],
    ['integer beyond int4', { title: 't', count: 2147483648 }, { field: 'count', code: 'OUT_OF_RANGE' }],
    ['bigint beyond int8', { title: 't', big: '9223372036854775808' }, { field: 'big', code: 'OUT_OF_RANGE' }],
    ['bigint as a fraction string', { title: 't', big: '1.5' }, { field: 'big', code: 'INVALID_FORMAT' }],
    ['bigint as an unsafe JSON number', { title: 't', big: 2 ** 60 }, { field: 'big', code: 'OUT_OF_RANGE' }],
    ['numeric as words', { title: 't', price: 'ten' }, { field: 'price', code: 'INVALID_FORMAT' }],
    ['numeric as NaN', { title: 't', price: 'NaN' }, { field: 'price', code: 'INVALID_FORMAT' }],
    ['a string for boolean', { title: 't', active: 'true' }, { field: 'active', code: 'INVALID_TYPE' }],
    ['a malformed uuid', { title: 't', ownerId: `{${UUID}}` }, { field: 'ownerId', code: 'INVALID_FORMAT' }],
    ['a timestamp without a zone', { title: 't', seenAt: '2026-01-31T12:00:00' }, { field: 'seenAt', code: 'INVALID_FORMAT' }],
    ['an impossible timestamp', { title: 't', seenAt: '2026-02-30T12:00:00Z' }, { field: 'seenAt', code: 'INVALID_FORMAT' }],
    ['an impossible date', { title: 't', day: '2027-02-29' }, { field: 'day', code: 'INVALID_FORMAT' }],
    ['a date with a time', { title: 't', day: '2027-02-01T00:00:00Z' }, { field: 'day', code: 'INVALID_FORMAT' }],
    ['a jsonb value over DATA_MAX_JSONB_SIZE_BYTES', { title: 't', meta: { text: 'x'.repeat(300) } }, { field: 'meta', code: 'TOO_LONG' }],
    ['a record over DATA_MAX_RECORD_SIZE_BYTES', { title: 'x'.repeat(5000) }, { field: 'body', code: 'TOO_LONG' }],
  ])('refuses %s', (_, body, expected) => {
    expect(check(body)).toEqual([expect.objectContaining(expected)]);
  });

  it('reports every mistake of a body at once', () => {
    expect(check({ count: 'x', colour: 1, id: UUID })).toEqual([
      expect.objectContaining({ field: 'count' }), expect.objectContaining({ field: 'colour' }),
      expect.objectContaining({ field: 'id' }), expect.objectContaining({ field: 'title', code: 'REQUIRED' }),
    ]);
  });

  it('checks only the fields an update gives, and needs one', () => {
    expect(check({ price: '3.20' }, 'update')).toEqual({ price: '3.20' });
    expect(check({ title: null }, 'update')).toEqual([expect.objectContaining({ field: 'title', code: 'REQUIRED' })]);
    expect(check({}, 'update')).toEqual([expect.objectContaining({ field: 'body', code: 'REQUIRED' })]);
  });

  it('measures a whole record against the limit (the record an update leaves)', () => {
    expect(() => checkRecordSize({ title: 'x'.repeat(100) }, 4096)).not.toThrow();
    expect(() => checkRecordSize({ title: 'x'.repeat(4096) }, 4096)).toThrow(expect.objectContaining({ type: 'validation-error' }));
  });
});
