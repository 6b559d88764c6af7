import { z } from 'zod';
import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import { sql } from '../../pool';
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
 */

/** A record as the API answers it: camelCase field names, timestamps as ISO 8601 strings, embeds as objects/arrays. */
export type DataRecord = Record<string, unknown>;

const record = z.record(z.string(), z.unknown());

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

const ROOT = 't';

/** The statement of one page of a list: LIMIT page size + 1, so `hasMore` needs no count. */
export function listStatement(plan: ReadPlan) {
  const conditions = plan.after ? [...plan.conditions.map((c) => conditionSql(ROOT, c)), keysetSql(plan, plan.after)]
    : plan.conditions.map((c) => conditionSql(ROOT, c));
  const keys = plan.order.map((key) => sql.fragment`to_json(${column(ROOT, key.column)}) #>> '{}'`);
  const keyset = sql.fragment`json_build_array(${sql.join(keys, sql.fragment`, `)}) AS ${sql.identifier([KEYSET])}`;
  return sql.type(record)`
    SELECT ${sql.join([...selectList(ROOT, plan.fields, plan.embeds, plan.tenantId), keyset], sql.fragment`, `)}
    FROM ${sql.identifier([plan.schema, plan.table])} AS ${sql.identifier([ROOT])}
    WHERE ${sql.join([sql.fragment`${column(ROOT, 'tenant_id')} = ${plan.tenantId}`, ...conditions], sql.fragment` AND `)}
    ORDER BY ${sql.join(plan.order.map((key) => (key.direction === 'asc'
      ? sql.fragment`${column(ROOT, key.column)} ASC NULLS LAST` : sql.fragment`${column(ROOT, key.column)} DESC NULLS FIRST`)), sql.fragment`, `)}
    LIMIT ${plan.pageSize + 1}
  `;
}

/** The statement of one record of the plan's table by id. */
export function recordStatement(plan: ReadPlan, id: string) {
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

/**
 * One page of records: `rows` (at most page size) and, when another page follows, `nextKeys`, the
 * order-key values of the last row (services/data/query/page-token.ts makes the token of them).
 */
export async function selectRecordPage(tx: CommonQueryMethods, plan: ReadPlan): Promise<{ rows: DataRecord[]; nextKeys?: (string | null)[] }> {
  const fetched = await tx.any(listStatement(plan));
  const rows = fetched.slice(0, plan.pageSize).map(({ [KEYSET]: _keys, ...fields }) => fields);
  if (fetched.length <= plan.pageSize) return { rows };
  return { rows, nextKeys: fetched[plan.pageSize - 1][KEYSET] as (string | null)[] };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The record `id` of the plan's table (with the plan's select), or null: unknown, soft-deleted, or another tenant's. */
export async function selectRecord(tx: CommonQueryMethods, plan: ReadPlan, id: string): Promise<DataRecord | null> {
  // Not an id at all: no record, rather than a cast error from the database.
  if (!UUID.test(id)) return null;
  return tx.maybeOne(recordStatement(plan, id));
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
