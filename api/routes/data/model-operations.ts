import Joi from 'joi';
import { MAX_NESTED_RECORDS } from '../../../services/data/nested-writes';
import { MAX_FILTERS } from '../../../services/data/query/plan';
import type { DataCatalogue, DataField, DataFieldType, DataModel } from '../../../services/data/catalogue';
import { feeds, type DocumentedOperation } from '../../http/route-registry';
import { uuid } from '../../http/ids';
import { listEnvelope, listHeaders, listQueryWith, listResponseHeaders } from './records.schemas';

/**
 * The data namespace's OpenAPI document per model (issue 16): the record routes are parametric
 * (`/data/:module/:model`), and the document shows them once per autoApi model of the catalogue, with
 * the model's record, create and patch bodies and its filters as query parameters. Built from the
 * DataModel the service validates and queries with (services/data/record-validation.ts,
 * services/data/query/), so a value the document calls valid is one the service takes. Each schema
 * may be narrower than the service (a date's day up to 28, a bigint string up to 18 digits), never wider.
 */

const INT32 = { min: -2_147_483_648, max: 2_147_483_647 };

/** Value grammars the query string and the bodies share (record-validation.ts converters), as regex sources without anchors. */
const DATE = '[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])';
const TIMESTAMP = `${DATE}T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?(Z|[+-](0[0-9]|1[0-4]):[0-5][0-9])`;
const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const BIGINT = '[+-]?[0-9]{1,18}';
const DECIMAL = '[+-]?[0-9]{1,15}(\\.[0-9]{1,6})?';

const anchored = (source: string) => new RegExp(`^(${source})$`);

/** A field's value in a create or patch body. */
function bodyValue(type: DataFieldType): Joi.Schema {
  switch (type) {
    case 'text': return Joi.string().allow('');
    case 'integer': return Joi.number().integer().min(INT32.min).max(INT32.max);
    // A JSON number is exact to 2^53; beyond, the digits go as a string.
    case 'bigint': return Joi.alternatives().try(
      Joi.number().integer().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER),
      Joi.string().pattern(anchored(BIGINT), 'digits'),
    );
    case 'numeric': return Joi.alternatives().try(Joi.number(), Joi.string().pattern(anchored(DECIMAL), 'decimal'));
    case 'boolean': return Joi.boolean();
    case 'uuid':
    case 'file': return uuid;
    case 'date': return Joi.string().pattern(anchored(DATE), 'date');
    case 'timestamptz': return Joi.string().pattern(anchored(TIMESTAMP), 'date-time with a zone');
    // Any JSON value but null, which is the field's own absence of a value.
    case 'jsonb': return Joi.alternatives().try(Joi.object().unknown(true), Joi.array(), Joi.string().allow(''), Joi.number(), Joi.boolean());
  }
}

/** A field's value as a record answers it (db/pool.ts type parsers: int8 and numeric as numbers, timestamps ISO 8601 in UTC). */
function answerValue(type: DataFieldType): Joi.Schema {
  switch (type) {
    case 'text': return Joi.string().allow('');
    case 'integer':
    case 'bigint': return Joi.number().integer();
    case 'numeric': return Joi.number();
    case 'boolean': return Joi.boolean();
    case 'uuid':
    case 'file': return Joi.string().guid();
    case 'date': return Joi.string().pattern(/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/, 'date');
    case 'timestamptz': return Joi.string().isoDate();
    case 'jsonb': return Joi.any();
  }
}

const nullableIf = (field: DataField, schema: Joi.Schema) => (field.nullable ? schema.allow(null) : schema);

const ownFields = (model: DataModel) => model.fields.filter((field) => !field.system);

/** Every field may be left out by `select=`; the relations appear only when embedded. */
function recordSchema(model: DataModel, catalogue: DataCatalogue, embedded = false): Joi.ObjectSchema {
  const fields = Object.fromEntries(model.fields.map((field) => [field.name, nullableIf(field, answerValue(field.type)).description(
    `${field.type}${field.references ? `, a ${field.references} id` : ''}${field.system ? ', set by the platform' : ''}`,
  )]));
  // An embedded record may embed again (two levels in all): its own relations are not spelled out.
  if (embedded) return Joi.object(fields).unknown(true);
  const relations = Object.fromEntries(model.relations.flatMap((relation) => {
    const target = catalogue.model(model.module, relation.name);
    if (!target) return [];
    const row = recordSchema(target, catalogue, true);
    return [[relation.name, relation.cardinality === 'one'
      ? row.allow(null).description(`The ${relation.name} record referenced (select=${relation.name}(…))`)
      : Joi.array().items(row).description(`The ${relation.name} records referencing this one (select=${relation.name}(…))`)]];
  }));
  return Joi.object({ ...fields, ...relations }).description(`A ${model.module}.${model.name} record: the fields select= names (all by default)`);
}

/** The model's own fields of a create body, less `except` (a nested record's reference to its parent). */
function createFields(model: DataModel, except?: string): Joi.PartialSchemaMap {
  return Object.fromEntries(ownFields(model).filter((field) => field.name !== except).map((field) => {
    const value = nullableIf(field, bodyValue(field.type));
    return [field.name, field.nullable ? value : value.required()];
  }));
}

/**
 * The one-to-many relations a create may nest records of (services/data/nested-writes.ts): those
 * `select=` embeds as arrays, with one reference between the models, whose name is no field. Each
 * array holds at most its share of the MAX_NESTED_RECORDS a create nests in all, so the document is
 * never wider than the service; a nested record is the target's create body without its reference
 * to the parent and without nested records of its own.
 */
function nestedArrays(model: DataModel, catalogue: DataCatalogue): Joi.PartialSchemaMap {
  const nestable = model.relations.flatMap((relation) => {
    const found = relation.cardinality === 'many' && !model.fields.some((field) => field.name === relation.name)
      ? catalogue.relationOf(model, relation.name) : undefined;
    if (!found || 'code' in found) return [];
    const reference = found.target.fields.find((field) => field.column === relation.remoteColumn)!;
    return [{ name: relation.name, target: found.target, reference: reference.name }];
  });
  const share = Math.floor(MAX_NESTED_RECORDS / Math.max(nestable.length, 1));
  return Object.fromEntries(nestable.map(({ name, target, reference }) => [name, Joi.array()
    .items(Joi.object(createFields(target, reference)))
    .max(share)
    .description(`${target.module}.${name} records created with this one in its transaction, their ${reference} set to its id `
      + `(which they may not name); one level deep, at most ${MAX_NESTED_RECORDS} nested records in all; answered embedded as select=*,${name}(*) would`)]));
}

function createBody(model: DataModel, catalogue: DataCatalogue): Joi.ObjectSchema {
  return Joi.object({ ...createFields(model), ...nestedArrays(model, catalogue) });
}

function patchBody(model: DataModel): Joi.ObjectSchema {
  return Joi.object(Object.fromEntries(ownFields(model).map((field) => [field.name, nullableIf(field, bodyValue(field.type))]))).min(1);
}

/**
 * A filter value as the query language reads it (services/data/query/plan.ts valueOf): `plain` at
 * the top level, where the value runs to the end; `listed` inside `in.(…)` and or-groups, where an
 * unquoted value holds no comma, parenthesis or quote.
 */
function filterValues(type: DataFieldType): { plain: string; listed: string } | undefined {
  switch (type) {
    case 'text': return { plain: '.*', listed: '[^,()"\\s][^,()"]*' };
    case 'integer': return { plain: '[+-]?[0-9]{1,9}', listed: '[+-]?[0-9]{1,9}' };
    case 'bigint': return { plain: BIGINT, listed: BIGINT };
    case 'numeric': return { plain: DECIMAL, listed: DECIMAL };
    case 'boolean': return { plain: 'true|false', listed: 'true|false' };
    case 'uuid':
    case 'file': return { plain: UUID, listed: UUID };
    case 'date': return { plain: DATE, listed: DATE };
    case 'timestamptz': return { plain: TIMESTAMP, listed: TIMESTAMP };
    // jsonb takes is.null and is.notnull only.
    case 'jsonb': return undefined;
  }
}

/** `[not.]op.value` for one field, as a regex source; `grouped`: the form inside an or-group. */
function conditionGrammar(field: DataField, grouped: boolean): string {
  const values = filterValues(field.type);
  const alternatives = ['is\\.(null|notnull)'];
  if (values) {
    const value = grouped ? values.listed : values.plain;
    alternatives.push(`(eq|neq|gt|lt|gte|lte)\\.(${value})`, `in\\.\\(((${values.listed})(,(${values.listed}))*)?\\)`);
    if (field.type === 'text') alternatives.push(`(like|ilike)\\.(${value})`);
  }
  return `(not\\.)?(${alternatives.join('|')})`;
}

const OPERATORS = 'eq, neq, gt, lt, gte, lte, in.(a,b), is.null, is.notnull';

function filterParameter(field: DataField): Joi.Schema {
  const operators = field.type === 'jsonb' ? 'is.null, is.notnull'
    : field.type === 'text' ? `${OPERATORS}, like and ilike (\`*\` or \`%\` as wildcard)` : OPERATORS;
  return Joi.string().pattern(anchored(conditionGrammar(field, false)), 'filter').description(
    `Filter on ${field.name} (${field.type}): \`op.value\` with ${operators}, each negatable with \`not.\` (\`not.in.(a,b)\`). `
    + `In \`in.(…)\` and in \`or=\` a value holding commas or parentheses is written in double quotes. At most ${MAX_FILTERS} filters a request.`,
  );
}

const names = (fields: readonly DataField[]) => fields.map((field) => field.name).join('|');

/** `select=` of the model: its field names (or `*`); embeds are described, not in the pattern. */
function selectOf(model: DataModel): Joi.Schema {
  const item = `(\\*|${names(model.fields)})`;
  const relations = model.relations.map((relation) => relation.name).join(', ') || 'none';
  return Joi.string().pattern(anchored(`${item}(,${item})*`), 'fields').description(
    `Fields, \`*\` for all; relations embed as \`relation(fields)\`, two levels at most (relations: ${relations}; the embed grammar is not in this pattern)`,
  );
}

/** The list's query: the keys every list takes, narrowed to the model's names, and one filter per field. */
function listQueryOf(model: DataModel): Joi.ObjectSchema {
  const orderable = names(model.fields.filter((field) => field.type !== 'jsonb'));
  const key = `(${orderable})(\\.(asc|desc))?`;
  const condition = `(${model.fields.map((field) => `${field.name}\\.${conditionGrammar(field, true)}`).join('|')})`;
  return listQueryWith({
    select: selectOf(model),
    order: Joi.string().pattern(anchored(`${key}(,${key})*`), 'order keys').description('`field.asc,field.desc`, each field once; the id breaks ties'),
    or: Joi.string().pattern(anchored(`\\(${condition}(,${condition})*\\)`), 'conditions').description(
      '`(field.op.value,field.op.value)`: conditions joined by OR; groups nest as `and(…)`/`or(…)` (not in this pattern)',
    ),
    ...Object.fromEntries(model.fields.map((field) => [field.name, filterParameter(field)])),
  });
}

const idParams = Joi.object({ id: uuid.required() });

/** The five record operations of every model of the catalogue, for the parametric routes' `documentedAs`. */
export function recordOperations(catalogue: DataCatalogue): Record<'list' | 'create' | 'get' | 'update' | 'delete', () => DocumentedOperation[]> {
  const each = (operation: (model: DataModel, base: string, record: Joi.ObjectSchema) => DocumentedOperation) => () => catalogue.modules()
    .flatMap((module) => catalogue.models(module))
    .map((model) => operation(model, `/data/${model.module}/${model.name}`, recordSchema(model, catalogue)));
  const id = (model: DataModel) => `data.${model.module}.${model.name}`;
  return {
    list: each((model, base, record) => ({
      path: base, operationId: `${id(model)}.list`, summary: `${model.module}.${model.name} records: filters, order, select, keyset pages`,
      schemas: { query: listQueryOf(model), headers: listHeaders, response: { 200: listEnvelope(record) }, responseHeaders: { 200: listResponseHeaders } },
    })),
    create: each((model, base, record) => ({
      path: base, operationId: `${id(model)}.create`, summary: `Create a ${model.module}.${model.name} record`,
      schemas: {
        body: createBody(model, catalogue), response: { 201: record },
        links: { 201: feeds([`${id(model)}.get`, `${id(model)}.update`, `${id(model)}.delete`]) },
      },
    })),
    get: each((model, base, record) => ({
      path: `${base}/:id`, operationId: `${id(model)}.get`, summary: `One ${model.module}.${model.name} record`,
      schemas: { params: idParams, query: Joi.object({ select: selectOf(model) }), response: { 200: record } },
    })),
    update: each((model, base, record) => ({
      path: `${base}/:id`, operationId: `${id(model)}.update`, summary: `Change fields of a ${model.module}.${model.name} record`,
      schemas: { params: idParams, body: patchBody(model), response: { 200: record } },
    })),
    delete: each((model, base) => ({
      path: `${base}/:id`, operationId: `${id(model)}.delete`, summary: `Soft-delete a ${model.module}.${model.name} record`,
      schemas: { params: idParams, response: { 204: null } },
    })),
  };
}
