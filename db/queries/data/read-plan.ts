import type { DataFieldType } from './model';

/**
 * A read of the data layer, checked and typed (issue 16; PostgREST's ReadPlan): what
 * services/data/query/plan.ts makes of a request's query language and read.queries.ts turns into
 * one SQL statement. Every name in it is a column of the model (never client text), every value is
 * already converted to its field's type, so the SQL built from it can neither be injected nor fail
 * on a literal.
 */

/** A value converted for its column: numbers for integer, booleans for boolean, strings otherwise (bigint, numeric, uuid, timestamps, dates, text). */
export type PlanValue = string | number | boolean;

export type ComparisonOperator = 'eq' | 'neq' | 'gt' | 'lt' | 'gte' | 'lte' | 'like' | 'ilike';

/** A column of the table the condition reads, with the type its values are cast to. */
export interface PlanColumn {
  column: string;
  type: DataFieldType;
}

export type PlanCondition =
  | { kind: 'compare'; target: PlanColumn; operator: ComparisonOperator; value: PlanValue }
  | { kind: 'in'; target: PlanColumn; values: PlanValue[] }
  | { kind: 'null'; target: PlanColumn; isNull: boolean }
  | { kind: 'and' | 'or'; conditions: PlanCondition[] }
  /** A `not.` filter: SQL's NOT, so a NULL field matches neither `gt.60` nor `not.gt.60` (as in PostgREST). */
  | { kind: 'not'; condition: PlanCondition };

/** A field of a record in the response: `column` of the table answered as `name`. */
export interface PlanField {
  name: string;
  column: string;
  type: DataFieldType;
}

/** A relation embedded by `select=relation(...)`: many-to-one as an object (or null), one-to-many as an array. */
export interface PlanEmbed {
  /** The key of the embedded value in the record: the target model's name. */
  name: string;
  cardinality: 'one' | 'many';
  schema: string;
  table: string;
  /** The column of the embedding table and the column of the embedded one that must be equal. */
  localColumn: string;
  remoteColumn: string;
  fields: PlanField[];
  embeds: PlanEmbed[];
}

/** An order key; the plan always ends the keys with `id` so the order is total (keyset pagination). */
export interface PlanOrderKey extends PlanColumn {
  direction: 'asc' | 'desc';
  /** Whether the column can hold NULL (the keyset predicate then places NULLs as ORDER BY does: last ascending, first descending). */
  nullable: boolean;
}

export interface ReadPlan {
  schema: string;
  table: string;
  tenantId: string;
  fields: PlanField[];
  embeds: PlanEmbed[];
  /** ANDed; includes `deleted_at IS NULL` unless the request filtered on deletedAt itself. */
  conditions: PlanCondition[];
  order: PlanOrderKey[];
  /** Rows per page (lists); one more is fetched to know whether a next page exists. */
  pageSize: number;
  /** The order-key values of the last row of the previous page (page_token), each typed like `order[i]`. */
  after?: (PlanValue | null)[];
  /**
   * The row offset of this page in the whole list (lists): 0 for the first page, carried in the page
   * token for the others, since a keyset page cannot know it (the answer's Content-Range; docs/decisions/data.md).
   */
  pageStart?: number;
  /** Binds page tokens to the query they were issued for (filters, order, select). */
  queryHash: string;
  /**
   * A model's default one-record read (no select=): one statement text per model, worth preparing
   * once per connection. Other selections are not prepared: their texts are unbounded in number.
   */
  prepared?: boolean;
  /**
   * The page is best read down the index its order names, stopping after a page (plan.ts
   * orderIndexServesPage): the transaction runs with sorts discouraged, since PostgreSQL's own
   * choice goes wrong under row-level security when a filter uses LIKE (docs/performance/data.md).
   */
  readsOrderIndex?: boolean;
}
