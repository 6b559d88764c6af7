import type { DataField, DataFieldType, DataModel } from '../../db/queries/data/model';
import { problems, type FieldError } from '../../common/problems';

/**
 * A create or update body checked against its model (docs/reference/data.md#rule-5: validation from
 * the manifest), before any SQL runs: every mistake of the body is reported at once as errors[] of one
 * 400 validation-error, with the codes of the rest of the platform (api/http/field-errors.ts).
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** A value as its column takes it: numeric and bigint as exact strings, jsonb as the JSON value itself. */
export type ColumnValue = JsonValue;

/** The body's fields (model fields only), each with its column value, in the body's order. */
export interface RecordValues {
  fields: { field: DataField; value: ColumnValue }[];
}

export interface RecordLimits {
  /** DATA_MAX_RECORD_SIZE_BYTES: the record's fields serialized as JSON. */
  maxRecordSizeBytes: number;
  /** DATA_MAX_JSONB_SIZE_BYTES: one jsonb value serialized as JSON. */
  maxJsonbSizeBytes: number;
}

const INT32 = { min: -2_147_483_648, max: 2_147_483_647 };
const INT64 = { min: -9_223_372_036_854_775_808n, max: 9_223_372_036_854_775_807n };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
// A zone is required: a time without one would be read in the database session's zone.
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)$/i;

/** The value for the column, or why it is wrong: the error code and what the field takes. */
export type Converted = { value: ColumnValue } | { code: string; message: string };

const wrongType = (takes: string): Converted => ({ code: 'INVALID_TYPE', message: `must be ${takes}` });
const wrongFormat = (takes: string): Converted => ({ code: 'INVALID_FORMAT', message: `must be ${takes}` });
const outOfRange = (range: string): Converted => ({ code: 'OUT_OF_RANGE', message: `must be ${range}` });

function isCalendarDate(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** int8 from a JSON number (exact only up to 2^53) or from a string of digits (the whole range). */
function bigintOf(value: unknown): Converted {
  let digits: string;
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) return wrongType('an integer');
    if (!Number.isSafeInteger(value)) return outOfRange('sent as a string of digits beyond 2^53, where a JSON number has lost digits');
    digits = String(value);
  } else if (typeof value === 'string') {
    if (!/^[+-]?\d{1,20}$/.test(value)) return wrongFormat('a string of digits');
    digits = value;
  } else {
    return wrongType('an integer or a string of digits');
  }
  const big = BigInt(digits);
  return big < INT64.min || big > INT64.max ? outOfRange(`between ${INT64.min} and ${INT64.max}`) : { value: big.toString() };
}

/**
 * One conversion per field type, shared with the query language (services/data/query/plan.ts: filter
 * values and page-token keys), so a value means the same in a body, a filter and a token.
 */
export const converters: Record<DataFieldType, (value: unknown, limits: RecordLimits) => Converted> = {
  text: (value) => (typeof value === 'string' ? { value } : wrongType('a string')),
  integer: (value) => {
    if (typeof value !== 'number' || !Number.isInteger(value)) return wrongType('an integer');
    return value < INT32.min || value > INT32.max ? outOfRange(`between ${INT32.min} and ${INT32.max}`) : { value };
  },
  bigint: (value) => bigintOf(value),
  // As a string, so no digit is lost between JSON and the column (numeric is exact).
  numeric: (value) => {
    if (typeof value === 'number') return Number.isFinite(value) ? { value: String(value) } : wrongType('a finite number');
    if (typeof value !== 'string') return wrongType('a number or a decimal string');
    return DECIMAL.test(value) ? { value } : wrongFormat('a decimal number such as "12.50"');
  },
  boolean: (value) => (typeof value === 'boolean' ? { value } : wrongType('true or false')),
  uuid: (value) => uuidOf(value),
  file: (value) => uuidOf(value),
  date: (value) => {
    if (typeof value !== 'string') return wrongType('a date string');
    const parts = DATE.exec(value);
    return parts && isCalendarDate(Number(parts[1]), Number(parts[2]), Number(parts[3])) ? { value } : wrongFormat('a calendar date YYYY-MM-DD');
  },
  timestamptz: (value) => {
    if (typeof value !== 'string') return wrongType('a date-time string');
    const parts = TIMESTAMP.exec(value);
    const valid = parts && isCalendarDate(Number(parts[1]), Number(parts[2]), Number(parts[3]))
      && Number(parts[4]) < 24 && Number(parts[5]) < 60 && Number((parts[6] ?? ':00').slice(1, 3)) < 60;
    return valid ? { value } : wrongFormat('an ISO 8601 date-time with a zone, such as 2026-01-31T12:00:00Z');
  },
  jsonb: (value, limits) => {
    const size = Buffer.byteLength(JSON.stringify(value));
    return size > limits.maxJsonbSizeBytes ? { code: 'TOO_LONG', message: `must be at most ${limits.maxJsonbSizeBytes} bytes as JSON (${size} given)` }
      : { value: value as JsonValue };
  },
};

function uuidOf(value: unknown): Converted {
  if (typeof value !== 'string') return wrongType('a UUID string');
  return UUID.test(value) ? { value: value.toLowerCase() } : wrongFormat('a UUID (8-4-4-4-12 hex digits)');
}

/**
 * Checks a body and converts its values. `create`: every non-nullable field must be present;
 * `update`: only the fields given change, and at least one must be. System fields (id, tenantId,
 * createdAt, updatedAt, deletedAt) are refused, not silently dropped: a client sending `tenantId`
 * or `id` believes it decides them, and a 400 naming the field tells it that it never does
 * (docs/reference/data.md#rule-4: tenantId always comes from the token), where ignoring it would hide the mistake.
 */
export function validateRecord(model: DataModel, body: Record<string, unknown>, mode: 'create' | 'update', limits: RecordLimits): RecordValues {
  const errors: FieldError[] = [];
  const byName = new Map(model.fields.map((field) => [field.name, field]));
  const fields: RecordValues['fields'] = [];
  for (const [name, value] of Object.entries(body)) {
    const field = byName.get(name);
    if (!field) {
      // A key with no name is named by its request part, as the route guard does (a problem's field is never empty).
      errors.push({ field: name || 'body', code: 'UNKNOWN_FIELD', message: notAFieldMessage(model, name, mode) });
    } else if (field.system) {
      // The code other routes give a body key they do not take (object.unknown), with the reason.
      errors.push({ field: name, code: 'UNKNOWN_FIELD', message: `${name} is set by the platform and is never taken from a request` });
    } else if (value === null) {
      if (field.nullable) fields.push({ field, value: null });
      else errors.push({ field: name, code: 'REQUIRED', message: `${name} may not be null` });
    } else {
      const converted = converters[field.type](value, limits);
      if ('code' in converted) errors.push({ field: name, code: converted.code, message: `${name} ${converted.message}` });
      else fields.push({ field, value: converted.value });
    }
  }
  if (mode === 'create') {
    for (const field of model.fields) {
      if (!field.system && !field.nullable && !Object.hasOwn(body, field.name)) {
        errors.push({ field: field.name, code: 'REQUIRED', message: `${field.name} is required` });
      }
    }
  } else if (Object.keys(body).length === 0) {
    errors.push({ field: 'body', code: 'REQUIRED', message: 'An update names at least one field' });
  }
  if (errors.length > 0) throw problems.validation(errors, `The ${model.name} record is not valid`);
  checkRecordSize(Object.fromEntries(fields.map(({ field, value }) => [field.name, value])), limits.maxRecordSizeBytes);
  return { fields };
}

/**
 * Why a body key is not taken. A relation's name says where related records can be written: a create
 * nests the records of the model's one-to-many relations (nested-writes.ts, which takes those keys out
 * before the record is checked), so a relation seen here is a many-to-one one, one inside a nested
 * record (one level deep), or one in an update.
 */
function notAFieldMessage(model: DataModel, name: string, mode: 'create' | 'update'): string {
  const where = `${model.module}.${model.name}`;
  if (!model.relations.some((relation) => relation.name === name)) return `"${name}" is not a field of ${where}`;
  return mode === 'update'
    ? `${name} is a relation of ${where}, not a field: related records are written nested only by a create`
    : `${name} is a relation of ${where}, not a field: a create nests the records of its one-to-many relations, one level deep (a nested record nests none)`;
}

/**
 * A record's size is its fields serialized as JSON, as clients send and read it. Checked on the body
 * and again on the record an update leaves (an update of one field may grow a record past the limit).
 */
export function checkRecordSize(fields: Record<string, unknown>, maxBytes: number): void {
  const size = Buffer.byteLength(JSON.stringify(fields));
  if (size > maxBytes) {
    throw problems.validation([{ field: 'body', code: 'TOO_LONG', message: `The record is ${size} bytes as JSON; at most ${maxBytes} are allowed` }],
      `A record holds at most ${maxBytes} bytes`);
  }
}
