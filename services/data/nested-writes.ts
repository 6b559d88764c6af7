import { isProblem, problems, type FieldError } from '../../common/problems';
import type { DataField, DataModel } from '../../db/queries/data/model';
import type { DataRecord } from '../../db/queries/data/read.queries';
import type { DataCatalogue } from './catalogue';
import { validateRecord, type RecordLimits, type RecordValues } from './record-validation';

/**
 * Nested writes (issue 16, beyond the specification): `POST /data/crm/companies` with
 * `contacts: [{…}, …]` creates the company and its contacts in one transaction. A body key naming a
 * one-to-many relation of the model, by the name `select=` embeds it with (catalogue.ts relationOf),
 * holds records to create under the new record; the platform sets their reference to it
 * (`companyId`). One level deep, at most MAX_NESTED_RECORDS records; each one is checked, hooked,
 * counted, evented and audited as a record created alone (records.ts createRecord runs the same
 * steps for every row). Why these rules: docs/decisions/data.md, nested writes.
 */

/** At most this many nested records in one create (400 validation-error beyond). */
export const MAX_NESTED_RECORDS = 100;

/** A one-to-many relation a create nests records of. */
export interface NestedRelation {
  /** The relation's name, the target model's (`contacts`). */
  name: string;
  model: DataModel;
  /** The target's field that references the parent (`companyId`): set by the platform, refused in a nested record. */
  reference: DataField;
}

/** A create body split by its keys, its nested values not yet checked. */
export interface CreateBody {
  own: Record<string, unknown>;
  nested: { relation: NestedRelation; value: unknown }[];
  /** Keys that name a relation ambiguously. */
  errors: FieldError[];
}

/** A record to create: its checked values and, for a nested one, its place in the body (`contacts[1]`). */
export interface RecordToCreate {
  values: RecordValues;
  path?: string;
}

/** A checked create: the record's own values, then its nested records by relation, in body order. */
export interface CheckedCreate {
  values: RecordValues;
  nested: { relation: NestedRelation; records: RecordToCreate[] }[];
}

/** A body key's one-to-many relation; undefined for a field, an unknown key or a many-to-one relation (validateRecord names those). */
function nestedRelationOf(model: DataModel, catalogue: DataCatalogue, name: string): NestedRelation | Omit<FieldError, 'field'> | undefined {
  if (model.fields.some((field) => field.name === name)) return undefined;
  const found = catalogue.relationOf(model, name);
  if ('code' in found) return found.code === 'AMBIGUOUS_RELATION' ? found : undefined;
  const { relation, target } = found;
  if (relation.cardinality === 'one') return undefined;
  return { name, model: target, reference: target.fields.find((field) => field.column === relation.remoteColumn)! };
}

/** The record's own keys and its nested relations; what the caller must be allowed to create is known from this. */
export function splitCreateBody(model: DataModel, catalogue: DataCatalogue, body: Record<string, unknown>): CreateBody {
  const split: CreateBody = { own: {}, nested: [], errors: [] };
  for (const [key, value] of Object.entries(body)) {
    const relation = nestedRelationOf(model, catalogue, key);
    if (relation === undefined) split.own[key] = value;
    else if ('code' in relation) split.errors.push({ field: key, ...relation });
    else split.nested.push({ relation, value });
  }
  return split;
}

/** The models a create writes besides its own, each needing its create permission. */
export function nestedModels(body: CreateBody): DataModel[] {
  return [...new Set(body.nested.map(({ relation }) => relation.model))];
}

/** A field of a nested record as errors[] names it: `contacts[1].age`; the record as a whole (`body`) is `contacts[1]`. */
export function fieldAt(path: string | undefined, field: string): string {
  if (path === undefined) return field;
  return field === 'body' ? path : `${path}.${field}`;
}

/** A nested record's validation-error (its check, or a hook's refusal) with its fields named by path; any other error as it is. */
export function addressedAt(path: string, error: unknown): unknown {
  if (!isProblem(error) || error.type !== 'validation-error' || !error.extensions.errors) return error;
  return problems.validation(error.extensions.errors.map((entry) => ({ ...entry, field: fieldAt(path, entry.field) })), `${path}: ${error.detail}`);
}

/** `check`'s values, or undefined with its validation errors added to `errors`, named by path. */
function collected(errors: FieldError[], path: string | undefined, check: () => RecordValues): RecordValues | undefined {
  try {
    return check();
  } catch (error) {
    const addressed = path === undefined ? error : addressedAt(path, error);
    if (!isProblem(addressed) || addressed.type !== 'validation-error') throw error;
    errors.push(...addressed.extensions.errors ?? []);
    return undefined;
  }
}

function isRecordBody(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The nested records of one relation, checked against their model with the reference to the parent
 * (`parentId`) set: the reference given in a record is refused, since the record would then name two
 * parents. Each record is measured alone against the record size limit, as one created alone.
 */
function nestedRecordsOf(
  relation: NestedRelation, value: unknown, parentId: string, limits: RecordLimits, errors: FieldError[],
): RecordToCreate[] {
  const { name, model, reference } = relation;
  if (!Array.isArray(value)) {
    errors.push({ field: name, code: 'INVALID_TYPE', message: `${name} must be an array of ${model.module}.${model.name} records` });
    return [];
  }
  return value.flatMap((row: unknown, index) => {
    const path = `${name}[${index}]`;
    if (!isRecordBody(row)) {
      errors.push({ field: path, code: 'INVALID_TYPE', message: `${path} must be a ${model.module}.${model.name} record (an object)` });
      return [];
    }
    if (Object.hasOwn(row, reference.name)) {
      errors.push({
        field: fieldAt(path, reference.name), code: 'UNKNOWN_FIELD',
        message: `${reference.name} is set by the platform to the id of the record this create makes`,
      });
    }
    const values = collected(errors, path, () => validateRecord(model, { ...row, [reference.name]: parentId }, 'create', limits));
    return values ? [{ values, path }] : [];
  });
}

/**
 * A create body checked whole: the record (its id `id`), and its nested records with their reference
 * set to it. Every mistake of every record is one errors[] of one 400 validation-error, nested ones
 * named by path; more than MAX_NESTED_RECORDS nested records is refused before any is checked. A
 * body with no nested relation is checked exactly as before nesting existed.
 */
export function validateCreate(model: DataModel, body: CreateBody, id: string, limits: RecordLimits): CheckedCreate {
  if (body.nested.length === 0 && body.errors.length === 0) return { values: validateRecord(model, body.own, 'create', limits), nested: [] };
  const errors = [...body.errors];
  const sizes = body.nested.map(({ relation, value }) => ({ name: relation.name, size: Array.isArray(value) ? value.length : 0 }));
  const total = sizes.reduce((sum, { size }) => sum + size, 0);
  if (total > MAX_NESTED_RECORDS) {
    // Named by the relation whose records pass the limit.
    let seen = 0;
    const passing = sizes.find(({ size }) => (seen += size) > MAX_NESTED_RECORDS)!;
    throw problems.validation([...errors, {
      field: passing.name, code: 'TOO_LONG', message: `A create nests at most ${MAX_NESTED_RECORDS} records; ${total} given`,
    }], `At most ${MAX_NESTED_RECORDS} nested records in one create`);
  }
  const values = collected(errors, undefined, () => validateRecord(model, body.own, 'create', limits));
  const nested = body.nested.map(({ relation, value }) => ({ relation, records: nestedRecordsOf(relation, value, id, limits, errors) }));
  if (errors.length > 0 || !values) throw problems.validation(errors, `The ${model.name} record or its nested records are not valid`);
  return { values, nested };
}

/** Every record a create writes, nested ones included: what it counts against the plan's `records`. */
export function recordCountOf(create: CheckedCreate): number {
  return create.nested.reduce((sum, { records }) => sum + records.length, 1);
}

/**
 * Creates the nested records after their parent, one after the other in body order, each through
 * `create` (one record's steps); the answer's arrays by relation name, as `select=*,contacts(*)`
 * embeds them (UUID v7 ids in creation order are the embed's order).
 */
export async function createNestedRecords(
  create: CheckedCreate, createOne: (model: DataModel, record: RecordToCreate) => Promise<DataRecord>,
): Promise<Record<string, DataRecord[]>> {
  const embedded: Record<string, DataRecord[]> = {};
  for (const { relation, records } of create.nested) {
    embedded[relation.name] = [];
    for (const record of records) embedded[relation.name].push(await createOne(relation.model, record));
  }
  return embedded;
}
