import { createHash } from 'node:crypto';
import { DatabaseError } from 'pg';
import { z } from 'zod';
import { StatementTimeoutError, type FragmentSqlToken } from 'slonik';
import { sql } from '../../pool';
import type { StatementRows } from '../../tenant-reads';
import type { DataFieldType } from './model';
import type { ComparisonOperator, PlanColumn, PlanCondition, PlanEmbed, PlanField, PlanValue, ReadPlan } from './read-plan';

/**
 * A ReadPlan as ONE SQL statement (issue 16; PostgREST's QueryBuilder). Names come from the plan,
 * which took them from the model, and are written with sql.identifier; every value is a parameter
 * cast to its column's type. The tenant is named in the statement (`tenant_id = $n` for the table
 * and every embed) and the caller runs it inside withTenant, so row-level security filters it as well.
 *
 * - Embeds are correlated subqueries building JSON: many-to-one `row_to_json` (null when there is
 *   no live row), one-to-many `json_agg` ordered by id (`[]` when none). Soft-deleted rows are never embedded.
 * - Timestamps are answered as ISO 8601 in UTC with milliseconds, at the top and in embeds alike.
 * - Keyset pagination: ORDER BY the plan's keys (ascending NULLS LAST, descending NULLS FIRST,
 *   PostgreSQL's defaults, so the indexes serve them), LIMIT page size + 1, no OFFSET. The next page
 *   starts after the last row's key values: the OR over i of (keys before i equal, key i after),
 *   with the NULL placement above spelled out, never a row comparison (row comparisons are not
 *   leakproof, so under row-level security they cannot bound an index scan; see audit-read.queries.ts).
 * - The total (`Prefer: count=exact`) is an uncorrelated subquery of the page's own statement, so
 *   it counts in the snapshot the page was read in; it ignores the page position (every record the
 *   filters match). Without the preference nothing is counted.
 */

const countRow = z.object({ count: z.number() });

/** A record as the API answers it: camelCase field names, timestamps as ISO 8601 strings, embeds as objects/arrays. */
export type DataRecord = Record<string, unknown>;

/**
 * The row type of the statements, without a check: a row's columns are the plan's fields, named and
 * cast by the statement itself, so there is nothing left to validate, and z.record would copy every
 * row of every page once more (30 µs of a 21-row page, measured).
 */
const record = z.custom<DataRecord>();

/** The key values of the last row of a page, as PostgreSQL writes them in JSON (exact: timestamps keep their microseconds). */
const KEYSET = '$keyset';

const PG_TYPES: Record<DataFieldType, string> = {
  text: 'text', integer: 'int4', bigint: 'int8', numeric: 'numeric', boolean: 'bool',
  uuid: 'uuid', file: 'uuid', timestamptz: 'timestamptz', date: 'date', jsonb: 'jsonb',
};

const OPERATORS: Record<ComparisonOperator, FragmentSqlToken> = {
  eq: sql.fragment`=`, neq: sql.fragment`<>`, gt: sql.fragment`>`, lt: sql.fragment`<`,
  gte: sql.fragment`>=`, lte: sql.fragment`<=`, like: sql.fragment`LIKE`, ilike: sql.fragment`ILIKE`,
};

/** The total of `Prefer: count=exact`, as a column of the page's rows. */
const COUNT = '$count';

const ROOT = 't';

/** A statement cancelled by statement_timeout (SQLSTATE 57014, not a cancel request). */
export function isStatementTimeout(error: unknown): boolean {
  return error instanceof StatementTimeoutError || (error instanceof DatabaseError && error.code === '57014' && !error.message.includes('user request'));
}

/** Every record of the plan's table the filters match (no page position): `count(*)` as a subquery. */
function countSql(plan: ReadPlan): FragmentSqlToken {
  const alias = 'c';
  const conditions = [sql.fragment`${column(alias, 'tenant_id')} = ${plan.tenantId}`, ...plan.conditions.map((c) => conditionSql(alias, c))];
  return sql.fragment`(SELECT count(*) FROM ${sql.identifier([plan.schema, plan.table])} AS ${sql.identifier([alias])}
    WHERE ${sql.join(conditions, sql.fragment` AND `)})`;
}

/** The total alone: for a page with no row to carry it. */
export function countStatement(plan: ReadPlan) {
  return sql.type(countRow)`SELECT ${countSql(plan)} AS count`;
}

/**
 * The statement of one page of a list: LIMIT page size + 1, so `hasMore` needs no count; with
 * `count`, each row also carries the total. The page is chosen first, from the table's columns
 * alone, and only its rows are then shaped (timestamps as text, the keyset, the embeds): when the
 * filters match thousands of rows and the sort has to see them all, PostgreSQL would otherwise
 * compute every one's projection before the sort (a third of the work of such a page, measured).
 * Built for every request: keeping the statements built, with the tenant's and the page position's
 * slots found by stand-ins, gained 6 % of the list's throughput, not the 10 % that would pay for it
 * (docs/decisions/data.md, "Measured again and removed").
 */
export function listStatement(plan: ReadPlan, options: { count?: boolean } = {}) {
  const conditions = plan.after ? [...plan.conditions.map((c) => conditionSql(ROOT, c)), keysetSql(plan, plan.after)]
    : plan.conditions.map((c) => conditionSql(ROOT, c));
  const keys = plan.order.map((key) => sql.fragment`to_json(${column(ROOT, key.column)}) #>> '{}'`);
  const keyset = sql.fragment`json_build_array(${sql.join(keys, sql.fragment`, `)}) AS ${sql.identifier([KEYSET])}`;
  const total = options.count ? [sql.fragment`${countSql(plan)} AS ${sql.identifier([COUNT])}`] : [];
  const order = sql.join(plan.order.map((key) => (key.direction === 'asc'
    ? sql.fragment`${column(ROOT, key.column)} ASC NULLS LAST` : sql.fragment`${column(ROOT, key.column)} DESC NULLS FIRST`)), sql.fragment`, `);
  return sql.type(record)`
    SELECT ${sql.join([...selectList(ROOT, plan.fields, plan.embeds, plan.tenantId), keyset, ...total], sql.fragment`, `)}
    FROM (
      SELECT * FROM ${sql.identifier([plan.schema, plan.table])} AS ${sql.identifier([ROOT])}
      WHERE ${sql.join([sql.fragment`${column(ROOT, 'tenant_id')} = ${plan.tenantId}`, ...conditions], sql.fragment` AND `)}
      ORDER BY ${order}
      LIMIT ${plan.pageSize + 1}
    ) AS ${sql.identifier([ROOT])}
    ORDER BY ${order}
  `;
}

/**
 * The statement of one record of the plan's table by id. A model's default selection (plan.prepared)
 * is built once and named: PostgreSQL then parses and plans it once per connection, and the gateway
 * skips building the same text for every request (about 45 µs of a 0.5 ms read by id, measured).
 */
export function recordStatement(plan: ReadPlan, id: string) {
  if (!plan.prepared) return recordStatementOf(plan, id);
  const key = `${plan.schema}.${plan.table}(${plan.fields.map((field) => `${field.name}:${field.column}:${field.type}`).join()})`
    + JSON.stringify(plan.conditions);
  let prepared = preparedRecordStatements.get(key);
  if (prepared === undefined) {
    prepared = preparedRecordStatement(plan);
    preparedRecordStatements.set(key, prepared);
  }
  return { ...prepared, values: [plan.tenantId, id] };
}

function recordStatementOf(plan: ReadPlan, id: string) {
  const conditions = [
    sql.fragment`${column(ROOT, 'tenant_id')} = ${plan.tenantId}`,
    sql.fragment`${column(ROOT, 'id')} = ${id}::uuid`,
    ...plan.conditions.map((c) => conditionSql(ROOT, c)),
  ];
  return sql.type(record)`
    SELECT ${sql.join(selectList(ROOT, plan.fields, plan.embeds, plan.tenantId), sql.fragment`, `)}
    FROM ${sql.identifier([plan.schema, plan.table])} AS ${sql.identifier([ROOT])}
    WHERE ${sql.join(conditions, sql.fragment` AND `)}
  `;
}

/** At most two texts per model and manifest version (its fields; live or deleted records), so the map stays small. */
const preparedRecordStatements = new Map<string, ReturnType<typeof recordStatementOf> & { name: string }>();

const TEMPLATE_TENANT = '00000000-0000-7000-8000-000000000000';
const TEMPLATE_ID = '00000000-0000-7000-8000-000000000001';

/**
 * A default selection's statement, whose only parameters are the tenant and the id, in that order
 * (no embeds; its conditions, live records only or none, take no values): checked here, so a change
 * of the builder that breaks it fails on the first read instead of reading with the wrong
 * parameters. Named by its text, so a name always means the same statement on every connection,
 * whatever manifest version's columns it reads.
 */
function preparedRecordStatement(plan: ReadPlan) {
  const statement = recordStatementOf({ ...plan, tenantId: TEMPLATE_TENANT }, TEMPLATE_ID);
  if (statement.values.length !== 2 || statement.values[0] !== TEMPLATE_TENANT || statement.values[1] !== TEMPLATE_ID) {
    throw new Error('a prepared record statement takes exactly the tenant and the id');
  }
  return { ...statement, name: `data_one_${createHash('sha256').update(statement.sql).digest('hex').slice(0, 32)}` };
}

export interface RecordPage {
  rows: DataRecord[];
  /** The order-key values of the last row, when another page follows. */
  nextKeys?: (string | null)[];
  /** Every record the filters match, when asked for. */
  total?: number;
}

/**
 * One page of records: `rows` (at most page size) and, when another page follows, `nextKeys`, the
 * order-key values of the last row (services/data/query/page-token.ts makes the token of them);
 * with `count`, the `total`. An empty first page counts 0 in the same statement; an empty later
 * page (its records deleted since the previous one) has no row to carry the total, which a second
 * statement then counts.
 */
export async function selectRecordPage(read: StatementRows, plan: ReadPlan, options: { count?: boolean } = {}): Promise<RecordPage> {
  const fetched = await read(listStatement(plan, options));
  const rows = fetched.slice(0, plan.pageSize).map(({ [KEYSET]: _keys, [COUNT]: _count, ...fields }) => fields);
  const total = !options.count ? {}
    : { total: fetched.length > 0 ? fetched[0][COUNT] as number : plan.after ? (await read(countStatement(plan)))[0].count as number : 0 };
  if (fetched.length <= plan.pageSize) return { rows, ...total };
  return { rows, nextKeys: fetched[plan.pageSize - 1][KEYSET] as (string | null)[], ...total };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The record `id` of the plan's table (with the plan's select), or null: unknown, soft-deleted, or another tenant's. */
export async function selectRecord(read: StatementRows, plan: ReadPlan, id: string): Promise<DataRecord | null> {
  // Not an id at all: no record, rather than a cast error from the database.
  if (!UUID.test(id)) return null;
  const [found] = await read(recordStatement(plan, id));
  return found ?? null;
}

function column(alias: string, name: string) {
  return sql.identifier([alias, name]);
}

function typed(value: PlanValue, type: DataFieldType) {
  return sql.fragment`${value}::${sql.identifier([PG_TYPES[type]])}`;
}

/** The fields as `column AS "name"` (timestamps as ISO 8601 text), then the embeds. */
function selectList(alias: string, fields: readonly PlanField[], embeds: readonly PlanEmbed[], tenantId: string, depth = 0): FragmentSqlToken[] {
  return [
    ...fields.map((field) => (field.type === 'timestamptz'
      ? sql.fragment`to_char(${column(alias, field.column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${sql.identifier([field.name])}`
      : sql.fragment`${column(alias, field.column)} AS ${sql.identifier([field.name])}`)),
    ...embeds.map((embed) => sql.fragment`${embedSql(alias, embed, tenantId, depth + 1)} AS ${sql.identifier([embed.name])}`),
  ];
}

/** A correlated subquery of the embedded table's live rows of the same tenant joined to the embedding row. */
function embedSql(parent: string, embed: PlanEmbed, tenantId: string, depth: number): FragmentSqlToken {
  const alias = `e${depth}`;
  const rows = sql.fragment`
    SELECT ${sql.join(selectList(alias, embed.fields, embed.embeds, tenantId, depth), sql.fragment`, `)}
    FROM ${sql.identifier([embed.schema, embed.table])} AS ${sql.identifier([alias])}
    WHERE ${column(alias, 'tenant_id')} = ${tenantId}
      AND ${column(alias, embed.remoteColumn)} = ${column(parent, embed.localColumn)}
      AND ${column(alias, 'deleted_at')} IS NULL`;
  return embed.cardinality === 'one'
    ? sql.fragment`(SELECT row_to_json(r) FROM (${rows}) AS r)`
    : sql.fragment`(SELECT coalesce(json_agg(r), '[]'::json) FROM (${rows} ORDER BY ${column(alias, 'id')}) AS r)`;
}

function conditionSql(alias: string, condition: PlanCondition): FragmentSqlToken {
  switch (condition.kind) {
    case 'and':
    case 'or':
      return sql.fragment`(${sql.join(condition.conditions.map((c) => conditionSql(alias, c)), condition.kind === 'and' ? sql.fragment` AND ` : sql.fragment` OR `)})`;
    case 'not':
      return sql.fragment`NOT (${conditionSql(alias, condition.condition)})`;
    case 'null':
      return condition.isNull ? sql.fragment`${column(alias, condition.target.column)} IS NULL` : sql.fragment`${column(alias, condition.target.column)} IS NOT NULL`;
    case 'in':
      return sql.fragment`${column(alias, condition.target.column)} = ANY(${sql.array(condition.values, PG_TYPES[condition.target.type])})`;
    case 'compare':
      return sql.fragment`${column(alias, condition.target.column)} ${OPERATORS[condition.operator]} ${typed(condition.value, condition.target.type)}`;
  }
}

/**
 * The rows after the position `after` in the plan's order. For key i with last value v: ascending,
 * the rows after are `> v` and then the NULLs (none after a NULL); descending, NULLs come first, so
 * after v come the rows `< v`, and after a NULL every non-NULL. A first key that cannot be NULL also
 * bounds the scan (`>= v`), which an index on it can use.
 */
function keysetSql(plan: ReadPlan, after: readonly (PlanValue | null)[]): FragmentSqlToken {
  const equal = (key: PlanColumn, value: PlanValue | null) => (value === null
    ? sql.fragment`${column(ROOT, key.column)} IS NULL` : sql.fragment`${column(ROOT, key.column)} = ${typed(value, key.type)}`);
  const terms: FragmentSqlToken[] = [];
  plan.order.forEach((key, i) => {
    const value = after[i];
    const target = column(ROOT, key.column);
    let beyond: FragmentSqlToken | undefined;
    if (key.direction === 'asc') {
      if (value !== null) beyond = key.nullable ? sql.fragment`(${target} > ${typed(value, key.type)} OR ${target} IS NULL)` : sql.fragment`${target} > ${typed(value, key.type)}`;
    } else {
      beyond = value === null ? sql.fragment`${target} IS NOT NULL` : sql.fragment`${target} < ${typed(value, key.type)}`;
    }
    if (beyond) terms.push(sql.fragment`(${sql.join([...plan.order.slice(0, i).map((previous, j) => equal(previous, after[j])), beyond], sql.fragment` AND `)})`);
  });
  const predicate = terms.length === 0 ? sql.fragment`FALSE` : sql.fragment`(${sql.join(terms, sql.fragment` OR `)})`;
  const [first] = plan.order;
  if (first.nullable || after[0] === null) return predicate;
  const bound = first.direction === 'asc' ? sql.fragment`${column(ROOT, first.column)} >= ${typed(after[0], first.type)}`
    : sql.fragment`${column(ROOT, first.column)} <= ${typed(after[0], first.type)}`;
  return sql.fragment`${bound} AND ${predicate}`;
}
