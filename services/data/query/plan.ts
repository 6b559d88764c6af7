import { LRUCache } from 'lru-cache';
import { deepFreeze } from '../../../common/deep-freeze';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../../../common/pagination';
import { problems } from '../../../common/problems';
import type { DataField, DataModel } from '../../../db/queries/data/model';
import type {
  PlanColumn, PlanCondition, PlanEmbed, PlanField, PlanOrderKey, PlanValue, ReadPlan,
} from '../../../db/queries/data/read-plan';
import type { DataCatalogue } from '../catalogue';
import { converters } from '../record-validation';
import { decodeDataPageToken, queryHash } from './page-token';
import { pageTokenOf, parseListQuery, type FilterNode, type ListQuery, type OrderItem, type RawQuery, type SelectItem } from './parse';

/**
 * The query language's syntax tree checked against the model (issue 16; PostgREST's ReadPlan):
 * every name resolved to a column of the model or a relation the catalogue serves, every value
 * converted to its field's type by the same rules as request bodies (record-validation.ts), every
 * limit applied. What comes out can be turned into SQL without another check (read.queries.ts).
 *
 * Decisions the documents leave open:
 * - `deleted_at` is the system field deletedAt: filters accept both spellings (docs/reference/data.md#rule-15
 *   writes `?deleted_at=is.notnull`; our fields are camelCase). A filter on it anywhere (also inside or=)
 *   replaces the default `deleted_at IS NULL`, and means what it says: `is.notnull` returns the
 *   soft-deleted records only. Embedded records are always the live ones.
 * - The 10-filter limit counts every condition, inside or/and groups too.
 * - like/ilike: `*` and `%` are the wildcard; `_` and `\` in the value match themselves.
 * - Without `order`, records come in id order (UUID v7: creation order). `id` ends every order as
 *   the tie-breaker, in the direction of the key before it, so keyset pages are stable and an
 *   index can serve the order; jsonb fields cannot be ordered by or compared.
 * - Without `select`, a record has every field and no embeds.
 */

/** At most 10 filters per request (docs/reference/data.md#rule-13). */
export const MAX_FILTERS = 10;

/** A list request (GET /data/{module}/{model}): the query string as Koa gives it (`ctx.query`). */
export function planList(model: DataModel, catalogue: DataCatalogue, query: RawQuery, tenantId: string): ReadPlan {
  let plans = listPlans.get(model);
  if (!plans) {
    plans = new LRUCache({ max: LIST_PLANS_PER_MODEL });
    listPlans.set(model, plans);
  }
  const key = listPlanKey(query);
  let planned = plans.get(key);
  if (!planned) {
    planned = deepFreeze(planListQuery(model, catalogue, query));
    plans.set(key, planned);
  }
  const plan = { ...planned.plan, tenantId };
  const token = pageTokenOf(query, planned.tokenParameter);
  if (token === undefined) return { ...plan, pageStart: 0 };
  const { after, pageStart } = positionOf(model, plan.order, token, planned.tokenParameter, plan.queryHash);
  return { ...plan, after, pageStart };
}

/**
 * The list plans already made, by model and query string, the page token left out (Hasura's query
 * plan cache): a client asks for the same list again and again, often only its page token changing,
 * and parsing, checking and planning it was a third of the query language's own cost (issue 16,
 * docs/performance/data.md). Only a query that passed is kept, shared by every tenant (the tenant and the
 * page position are filled in per request), and never changed once made (frozen). A model belongs
 * to one catalogue, built once at start, so a plan never outlives the fields it names. Bounded per
 * model (LRU): the query strings are the clients'.
 */
const listPlans = new WeakMap<DataModel, LRUCache<string, PlannedList>>();

const LIST_PLANS_PER_MODEL = 256;

/** A list's plan as every tenant shares it, and where its page token comes from. */
interface PlannedList {
  plan: Omit<ReadPlan, 'tenantId' | 'after' | 'pageStart'>;
  tokenParameter: ListQuery['page']['tokenParameter'];
}

/** The query string as a key: every parameter in order, the page token's value left out (its presence kept). */
function listPlanKey(query: RawQuery): string {
  let key = '';
  for (const [parameter, value] of Object.entries(query)) {
    if (value === undefined) continue;
    const shown = PAGE_TOKEN_PARAMETERS.has(parameter) && typeof value === 'string' ? '*' : JSON.stringify(value);
    key += `${JSON.stringify(parameter)}=${shown}&`;
  }
  return key;
}

const PAGE_TOKEN_PARAMETERS: ReadonlySet<string> = new Set(['page_token', 'cursor']);

function planListQuery(model: DataModel, catalogue: DataCatalogue, query: RawQuery): PlannedList {
  const parsed = parseListQuery(query);
  const given = parsed.filters.reduce((sum, node) => sum + leaves(node), 0);
  if (given > MAX_FILTERS) throw problems.filterLimitExceeded(MAX_FILTERS, given);
  const conditions = parsed.filters.map((node) => conditionOf(model, node));
  if (!parsed.filters.some(namesDeletedAt)) conditions.push(LIVE_ONLY);
  const { fields, embeds } = selectionOf(model, catalogue, parsed.select ?? [{ kind: 'all' }]);
  const order = orderOf(model, parsed.order ?? []);
  const pageSize = parsed.page.size ?? PAGE_SIZE_DEFAULT;
  if (pageSize < 1 || pageSize > PAGE_SIZE_MAX) {
    throw invalid(parsed.page.sizeParameter, 'OUT_OF_RANGE', `must be between 1 and ${PAGE_SIZE_MAX}`);
  }
  const hash = queryHash([model.schema, model.table, conditions, order, fields, embeds]);
  return {
    plan: {
      schema: model.schema, table: model.table, fields, embeds, conditions, order, pageSize, queryHash: hash,
      readsOrderIndex: orderIndexServesPage(model, conditions, order, embeds),
    },
    tokenParameter: parsed.page.tokenParameter,
  };
}

/** A one-record request (GET /data/{module}/{model}/:id): only `select=` is accepted. */
export function planOne(model: DataModel, catalogue: DataCatalogue, query: RawQuery, tenantId: string): ReadPlan {
  const other = Object.keys(query).find((parameter) => parameter !== 'select' && query[parameter] !== undefined);
  if (other !== undefined) throw invalid(other, 'UNKNOWN_FIELD', 'is not a parameter of a one-record read; only select is');
  const parsed = parseListQuery(query);
  const { fields, embeds } = selectionOf(model, catalogue, parsed.select ?? [{ kind: 'all' }]);
  return {
    schema: model.schema, table: model.table, tenantId, fields, embeds, conditions: [LIVE_ONLY],
    order: [ID_ORDER], pageSize: 1, queryHash: '', prepared: parsed.select === undefined,
  };
}

/** The models a plan reads besides its own (each needs its `{module}.{model}.read` permission). */
export function embeddedModels(plan: Pick<ReadPlan, 'embeds'>): string[] {
  const names = new Set<string>();
  const visit = (embeds: readonly PlanEmbed[]): void => embeds.forEach((embed) => { names.add(embed.table); visit(embed.embeds); });
  visit(plan.embeds);
  return [...names];
}

const LIVE_ONLY: PlanCondition = { kind: 'null', target: { column: 'deleted_at', type: 'timestamptz' }, isNull: true };
const ID_ORDER: PlanOrderKey = { column: 'id', type: 'uuid', direction: 'asc', nullable: false };

function invalid(parameter: string, code: string, message: string) {
  return problems.validation([{ field: parameter, code, message }], `The query parameter ${parameter} is not valid`);
}

type FilterGroup = Extract<FilterNode, { kind: 'and' | 'or' }>;

function isGroup(node: FilterNode): node is FilterGroup {
  return node.kind === 'and' || node.kind === 'or';
}

function leaves(node: FilterNode): number {
  return isGroup(node) ? node.conditions.reduce((sum, child) => sum + leaves(child), 0) : 1;
}

function namesDeletedAt(node: FilterNode): boolean {
  return isGroup(node) ? node.conditions.some(namesDeletedAt) : fieldName(node.field) === 'deletedAt';
}

/** The one system field with a second spelling in filters (docs/reference/data.md#rule-15 writes `deleted_at`). */
function fieldName(name: string): string {
  return name === 'deleted_at' ? 'deletedAt' : name;
}

function fieldOf(model: DataModel, name: string, parameter: string): DataField {
  const field = model.fields.find((candidate) => candidate.name === name);
  if (!field) throw invalid(parameter, 'UNKNOWN_FIELD', `${name} is not a field of ${model.module}.${model.name}`);
  return field;
}

const columnOf = (field: DataField): PlanColumn => ({ column: field.column, type: field.type });

/**
 * A value of the query string converted for its field, by the rules of request bodies. The query
 * string has only text, so integers and booleans are read from it first (strictly: `1e3` is no integer).
 */
function valueOf(field: DataField, text: string, parameter: string): PlanValue {
  const candidate = field.type === 'integer' && /^[+-]?\d{1,10}$/.test(text) ? Number(text)
    : field.type === 'boolean' && (text === 'true' || text === 'false') ? text === 'true'
      : text;
  const converted = converters[field.type](candidate, { maxRecordSizeBytes: 0, maxJsonbSizeBytes: 0 });
  if ('code' in converted) throw invalid(parameter, converted.code, `${field.name} ${converted.message}`);
  return converted.value as PlanValue;
}

/**
 * `*` and `%` any run of characters (PostgREST takes both, and its clients send `%`); every other character,
 * `_` and `\` included, itself (LIKE's escape is `\`).
 */
function likePattern(text: string): string {
  return text.replace(/[\\_]/g, '\\$&').replace(/\*/g, '%');
}

function conditionOf(model: DataModel, node: FilterNode): PlanCondition {
  if (isGroup(node)) return { kind: node.kind, conditions: node.conditions.map((child) => conditionOf(model, child)) };
  const condition = leafConditionOf(model, node);
  return node.negated ? { kind: 'not', condition } : condition;
}

function leafConditionOf(model: DataModel, node: Exclude<FilterNode, FilterGroup>): PlanCondition {
  const field = fieldOf(model, fieldName(node.field), node.parameter);
  if (node.kind === 'is') return { kind: 'null', target: columnOf(field), isNull: node.isNull };
  if (field.type === 'jsonb') throw invalid(node.parameter, 'INVALID_OPERATOR', `${field.name} is jsonb: only is.null and is.notnull apply`);
  if (node.kind === 'in') return { kind: 'in', target: columnOf(field), values: node.values.map((value) => valueOf(field, value, node.parameter)) };
  if (node.operator === 'like' || node.operator === 'ilike') {
    if (field.type !== 'text') throw invalid(node.parameter, 'INVALID_OPERATOR', `${node.operator} applies to text fields; ${field.name} is ${field.type}`);
    return { kind: 'compare', target: columnOf(field), operator: node.operator, value: likePattern(node.value) };
  }
  return { kind: 'compare', target: columnOf(field), operator: node.operator, value: valueOf(field, node.value, node.parameter) };
}

function selectionOf(model: DataModel, catalogue: DataCatalogue, items: readonly SelectItem[]): { fields: PlanField[]; embeds: PlanEmbed[] } {
  const fields = new Map<string, PlanField>();
  const embeds: PlanEmbed[] = [];
  for (const item of items) {
    if (item.kind === 'all') {
      model.fields.forEach((field) => fields.set(field.name, { name: field.name, column: field.column, type: field.type }));
    } else if (item.kind === 'field') {
      const field = fieldOf(model, item.name, 'select');
      fields.set(field.name, { name: field.name, column: field.column, type: field.type });
    } else {
      if (embeds.some((embed) => embed.name === item.relation)) throw invalid('select', 'DUPLICATE_VALUE', `${item.relation} is embedded twice`);
      embeds.push(embedOf(model, catalogue, item.relation, item.items));
    }
  }
  const clash = embeds.find((embed) => fields.has(embed.name));
  if (clash) throw invalid('select', 'DUPLICATE_VALUE', `${clash.name} is both a field and a relation in select`);
  return { fields: [...fields.values()], embeds };
}

/** A relation is named by its target model (docs/reference/data.md#rule-17); the target must be a model the API serves (catalogue.ts relationOf). */
function embedOf(model: DataModel, catalogue: DataCatalogue, name: string, items: readonly SelectItem[]): PlanEmbed {
  const found = catalogue.relationOf(model, name);
  if ('code' in found) throw invalid('select', found.code, found.message);
  const { relation, target } = found;
  return {
    name, cardinality: relation.cardinality, schema: target.schema, table: target.table,
    localColumn: relation.localColumn, remoteColumn: relation.remoteColumn,
    ...selectionOf(target, catalogue, items),
  };
}

function orderOf(model: DataModel, items: readonly OrderItem[]): PlanOrderKey[] {
  const keys: PlanOrderKey[] = [];
  for (const item of items) {
    const field = fieldOf(model, item.field, 'order');
    if (field.type === 'jsonb') throw invalid('order', 'INVALID_VALUE', `${field.name} is jsonb and cannot be ordered by`);
    if (keys.some((key) => key.column === field.column)) throw invalid('order', 'DUPLICATE_VALUE', `${field.name} is named twice`);
    keys.push({ column: field.column, type: field.type, direction: item.direction, nullable: field.nullable });
  }
  if (keys.some((key) => key.column === 'id')) return keys;
  // The tie-breaker runs the way the last key does: ORDER BY created_at DESC, id DESC is the
  // (tenant_id, created_at, id) index read backwards, which can stop after one page; with id ASC
  // PostgreSQL would sort every matching row of the tenant first.
  const last = keys.at(-1);
  return [...keys, last ? { ...ID_ORDER, direction: last.direction } : ID_ORDER];
}

/** The indexes every model's table has for its order (provision.queries.ts), by their columns after tenant_id. */
const ORDER_INDEXES = [['id'], ['created_at', 'id']];

/**
 * Whether a list's page is best read down the index of its order, stopping after a page, rather
 * than by whatever plan PostgreSQL estimates cheaper. Under row-level security the planner may not
 * use a column's statistics for an operator that is not leakproof (LIKE, ILIKE), so it guesses that
 * such a filter keeps almost nothing and then prefers to read every row of the tenant and sort them:
 * 5 ms for a page the index walk finds in 0.3 (docs/performance/data.md). The walk is chosen when
 * - an index serves the order: (tenant_id, id) or (tenant_id, created_at, id), every key in one
 *   direction (the index read forwards or backwards);
 * - no filter names a column another index leads with (id, created_at, a reference), so every other
 *   plan reads every live row of the tenant as well, and the walk, which stops after a page, never
 *   reads more; a filter on the walked index's own first column only bounds the walk;
 * - nothing is embedded one-to-many: those arrays are sorted by id, and with sorts discouraged the
 *   planner would walk the target's id index instead of looking up the parent's rows.
 */
function orderIndexServesPage(model: DataModel, conditions: readonly PlanCondition[], order: readonly PlanOrderKey[], embeds: readonly PlanEmbed[]): boolean {
  const columns = order.map((key) => key.column);
  const walked = ORDER_INDEXES.find((index) => index.length === columns.length && index.every((column, i) => columns[i] === column));
  if (!walked || !order.every((key) => key.direction === order[0].direction) || embedsMany(embeds)) return false;
  const otherIndexes = new Set([...ORDER_INDEXES.map(([first]) => first), ...model.fields.filter((field) => field.references !== undefined).map((field) => field.column)]);
  otherIndexes.delete(walked[0]);
  return !conditions.some((condition) => columnsOf(condition).some((column) => otherIndexes.has(column)));
}

function columnsOf(condition: PlanCondition): string[] {
  switch (condition.kind) {
    case 'and': case 'or': return condition.conditions.flatMap(columnsOf);
    case 'not': return columnsOf(condition.condition);
    default: return [condition.target.column];
  }
}

function embedsMany(embeds: readonly PlanEmbed[]): boolean {
  return embeds.some((embed) => embed.cardinality === 'many' || embedsMany(embed.embeds));
}

/**
 * A page token's position: the last row's order-key values, typed like filter values (a forged value
 * is a 400, not a SQL error), and the row offset of the page it opens.
 */
function positionOf(
  model: DataModel, order: readonly PlanOrderKey[], token: string, parameter: string, hash: string,
): Required<Pick<ReadPlan, 'after' | 'pageStart'>> {
  const { keys, start } = decodeDataPageToken(token, parameter, hash, order.length);
  const after = keys.map((value, index) => {
    const key = order[index];
    const field = model.fields.find((candidate) => candidate.column === key.column)!;
    if (value === null) {
      if (!key.nullable) throw invalid(parameter, 'INVALID_FORMAT', 'is not a page token of this list');
      return null;
    }
    return valueOf(field, value, parameter);
  });
  return { after, pageStart: start };
}
