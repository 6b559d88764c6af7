import type { ComparisonOperator } from '../../../db/queries/data/read-plan';
import { problems, type FieldError } from '../../../common/problems';

/**
 * The query language of the data layer (docs/reference/data.md, rules 11 to 18; PostgREST's QueryParams): the query
 * string of a request → its syntax tree, pure. Only the grammar is checked here; whether a name is
 * a field or a relation of the model, and whether a value fits its field, is the plan's business
 * (plan.ts). Every error names the query parameter it was found in.
 *
 *   ?field=op.value          eq neq gt lt gte lte like ilike (`*` or `%` is the wildcard), in.(a,b,"c,d"), is.null, is.notnull
 *   ?field=not.op.value      any of them negated (`not.in.(a,b)`, `not.is.null`; also inside or/and groups)
 *   ?or=(f.op.v,and(f.op.v,f.op.v))   (also ?and=(...); groups nest)
 *   ?order=a.asc,b.desc      (asc by default)
 *   ?select=a,b,relation(c,relation2(d))   (`*` is every field)
 *   ?page_size=&page_token=  or  ?limit=&cursor=   (also ?offset=0, the first page: PostgREST clients' range(0, n))
 *
 * Quoting (PostgREST's): inside an `in` list and inside or/and groups a value may be written in
 * double quotes to hold commas, parentheses and dots, with `\"` and `\\` as escapes. A top-level
 * `?field=eq.value` is taken literally, quotes and all.
 */

/** The query string of a request as Koa parses it: a repeated parameter is an array. */
export type RawQuery = Readonly<Record<string, string | readonly string[] | undefined>>;

/** A leaf of the filter tree; `negated` (only when true): written with the `not.` prefix (PostgREST's). */
export type FilterNode =
  | { kind: 'compare'; parameter: string; field: string; operator: ComparisonOperator; value: string; negated?: true }
  | { kind: 'in'; parameter: string; field: string; values: string[]; negated?: true }
  | { kind: 'is'; parameter: string; field: string; isNull: boolean; negated?: true }
  | { kind: 'and' | 'or'; parameter: string; conditions: FilterNode[] };

export type SelectItem =
  | { kind: 'all' }
  | { kind: 'field'; name: string }
  | { kind: 'embed'; relation: string; items: SelectItem[] };

export interface OrderItem {
  field: string;
  direction: 'asc' | 'desc';
}

export interface ListQuery {
  /** ANDed, in query-string order. */
  filters: FilterNode[];
  order?: OrderItem[];
  select?: SelectItem[];
  /** The parameter the page size and token came in: `page_size`/`page_token`, or `limit`/`cursor` (the token itself: pageTokenOf). */
  page: { sizeParameter: 'page_size' | 'limit'; size?: number; tokenParameter: 'page_token' | 'cursor' };
}

const COMPARISONS: ReadonlySet<string> = new Set<ComparisonOperator>(['eq', 'neq', 'gt', 'lt', 'gte', 'lte', 'like', 'ilike']);
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** or/and groups nest at most this deep (not in the documents; refused before recursion can go deep). */
const MAX_NESTING = 8;
/** Relations embed at most 2 levels deep (docs/reference/data.md#rule-17). */
export const MAX_RELATION_DEPTH = 2;
/** An `in` list holds at most this many values (not in the documents; bounds the statement a request can build). */
export const MAX_IN_VALUES = 100;

const RESERVED = new Set(['select', 'order', 'or', 'and', 'page_size', 'page_token', 'limit', 'cursor', 'offset']);

export class QuerySyntaxError extends Error {
  constructor(readonly parameter: string, message: string, readonly code = 'INVALID_FORMAT') {
    super(message);
  }
}

function syntax(parameter: string, message: string, code?: string): never {
  throw new QuerySyntaxError(parameter, message, code);
}

/** The whole query string of a list request; a grammar error is a 400 validation-error naming its parameter. */
export function parseListQuery(query: RawQuery): ListQuery {
  const errors: FieldError[] = [];
  const attempt = <T>(work: () => T): T | undefined => {
    try {
      return work();
    } catch (error) {
      if (!(error instanceof QuerySyntaxError)) throw error;
      errors.push({ field: error.parameter, code: error.code, message: error.message });
      return undefined;
    }
  };
  const filters: FilterNode[] = [];
  for (const [parameter, raw] of Object.entries(query)) {
    if (raw === undefined) continue;
    const values: readonly string[] = typeof raw === 'string' ? [raw] : raw;
    if (parameter === '') {
      // `?=x` names no field; errors[] must still name where the fault is.
      errors.push({ field: 'query', code: 'UNKNOWN_FIELD', message: 'a parameter without a name is not a filter' });
      continue;
    }
    if (RESERVED.has(parameter)) {
      if (values.length > 1) errors.push({ field: parameter, code: 'INVALID_FORMAT', message: 'may be given once' });
      continue;
    }
    for (const value of values) {
      const filter = attempt(() => parseFilter(parameter, parameter, value));
      if (filter) filters.push(filter);
    }
  }
  const single = (parameter: string): string | undefined => firstValueOf(query, parameter);
  for (const kind of ['or', 'and'] as const) {
    const text = single(kind);
    if (text === undefined) continue;
    const group = attempt(() => parseGroup(kind, kind, text, 1));
    if (group) filters.push(group);
  }
  const orderText = single('order');
  const order = orderText === undefined ? undefined : attempt(() => parseOrder(orderText));
  const selectText = single('select');
  const select = selectText === undefined ? undefined : attempt(() => parseSelect(selectText));
  const page = attempt(() => parsePage(single));
  if (errors.length > 0 || !page) throw problems.validation(errors, 'The query string does not follow the query language');
  return { filters, ...(order ? { order } : {}), ...(select ? { select } : {}), page };
}

/** `field=op.value` or `field=not.op.value` (also a leaf of an or/and group, where `quoted` values are unquoted). */
export function parseFilter(parameter: string, field: string, written: string, quoted = false): FilterNode {
  const negated = written.startsWith('not.') ? { negated: true as const } : {};
  const text = written.startsWith('not.') ? written.slice('not.'.length) : written;
  const dot = text.indexOf('.');
  const operator = dot < 0 ? text : text.slice(0, dot);
  if (dot < 0) syntax(parameter, `"${text}" is not operator.value (for example eq.42)`);
  const value = text.slice(dot + 1);
  if (COMPARISONS.has(operator)) {
    return { kind: 'compare', parameter, field, operator: operator as ComparisonOperator, value: quoted ? unquote(parameter, value) : value, ...negated };
  }
  if (operator === 'in') return { kind: 'in', parameter, field, values: parseList(parameter, value), ...negated };
  if (operator === 'is') {
    if (value !== 'null' && value !== 'notnull') syntax(parameter, 'is takes null or notnull', 'INVALID_VALUE');
    return { kind: 'is', parameter, field, isNull: value === 'null', ...negated };
  }
  return syntax(parameter, `unknown operator "${operator}"; use eq, neq, gt, lt, gte, lte, like, ilike, in or is, each optionally after not.`, 'UNKNOWN_OPERATOR');
}

/** `(a,b,"c,d")`: the values of an `in`. */
function parseList(parameter: string, text: string): string[] {
  if (!text.startsWith('(') || !text.endsWith(')')) syntax(parameter, 'in takes a parenthesised list: in.(a,b)');
  const inner = text.slice(1, -1);
  const items = inner === '' ? [] : splitTopLevel(parameter, inner);
  if (items.length > MAX_IN_VALUES) syntax(parameter, `an in list holds at most ${MAX_IN_VALUES} values`, 'TOO_LONG');
  return items.map((item) => {
    if (!item.startsWith('"') && /[()]/.test(item)) syntax(parameter, 'a value with parentheses must be quoted: "a(b)"');
    return unquote(parameter, item);
  });
}

/** `(cond,cond,...)` of `or=`/`and=`, or of a nested `or(...)`/`and(...)`. */
function parseGroup(parameter: string, kind: 'or' | 'and', text: string, nesting: number): FilterNode {
  if (nesting > MAX_NESTING) syntax(parameter, `groups nest at most ${MAX_NESTING} deep`);
  if (!text.startsWith('(') || !text.endsWith(')')) syntax(parameter, `${kind} takes a parenthesised list: ${kind}=(a.eq.1,b.gt.2)`);
  const items = splitTopLevel(parameter, text.slice(1, -1));
  if (items.length === 0) syntax(parameter, `${kind} needs at least one condition`);
  const conditions = items.map((item) => {
    const nested = /^(or|and)\(/.exec(item);
    if (nested) return parseGroup(parameter, nested[1] as 'or' | 'and', item.slice(nested[1].length), nesting + 1);
    const dot = item.indexOf('.');
    const field = dot < 0 ? item : item.slice(0, dot);
    if (!IDENTIFIER.test(field)) syntax(parameter, `"${item}" is not field.operator.value`);
    return parseFilter(parameter, field, item.slice(dot + 1), true);
  });
  return { kind, parameter, conditions };
}

/** `a.asc,b.desc,c`. */
function parseOrder(text: string): OrderItem[] {
  const items = splitTopLevel('order', text);
  if (items.length === 0) syntax('order', 'names no field');
  return items.map((item) => {
    const [field, direction = 'asc', ...rest] = item.trim().split('.');
    if (!IDENTIFIER.test(field)) syntax('order', `"${item}" is not field.asc or field.desc`);
    if ((direction !== 'asc' && direction !== 'desc') || rest.length > 0) {
      syntax('order', `"${item}": the direction is asc or desc`, 'INVALID_VALUE');
    }
    return { field, direction };
  });
}

/**
 * `a,b,relation(c,relation2(d))`. The depth of embeds is a property of the text alone, so it is
 * checked here, before any recursion could go deep: a third level is 400 relations-depth-exceeded.
 */
function parseSelect(text: string, depth = 0): SelectItem[] {
  const items = splitTopLevel('select', text);
  if (items.length === 0) syntax('select', 'names no field');
  return items.map((raw): SelectItem => {
    const item = raw.trim();
    if (item === '*') return { kind: 'all' };
    const open = item.indexOf('(');
    if (open < 0) {
      if (!IDENTIFIER.test(item)) syntax('select', `"${item}" is not a field name`);
      return { kind: 'field', name: item };
    }
    const relation = item.slice(0, open).trim();
    if (!IDENTIFIER.test(relation) || !item.endsWith(')')) syntax('select', `"${item}" is not relation(fields)`);
    if (depth >= MAX_RELATION_DEPTH) throw problems.relationsDepthExceeded(MAX_RELATION_DEPTH);
    return { kind: 'embed', relation, items: parseSelect(item.slice(open + 1, -1), depth + 1) };
  });
}

const PAGE_SIZE = /^[0-9]{1,9}$/;

function parsePage(single: (parameter: string) => string | undefined): ListQuery['page'] {
  const [pageSize, limit, pageToken, cursor, offset] = ['page_size', 'limit', 'page_token', 'cursor', 'offset'].map(single);
  if (pageSize !== undefined && limit !== undefined) syntax('limit', 'give page_size or limit, not both', 'CONFLICTING_FIELDS');
  if (pageToken !== undefined && cursor !== undefined) syntax('cursor', 'give page_token or cursor, not both', 'CONFLICTING_FIELDS');
  // Keyset pages have no offset to start from; 0, the first page, is what PostgREST clients send
  // with range(0, n) and limit(n), so it is taken (docs/decisions/data.md, PostgREST clients).
  if (offset !== undefined && offset !== '0') {
    syntax('offset', 'only offset=0 (the first page) is served: lists are keyset pages; follow next_page_token or meta.cursor', 'OUT_OF_RANGE');
  }
  if (offset !== undefined && [pageToken, cursor].some((token) => token !== undefined && token !== '')) syntax('offset', 'offset=0 is the first page: not with a page token', 'CONFLICTING_FIELDS');
  const sizeParameter = limit !== undefined ? 'limit' : 'page_size';
  const sizeText = pageSize ?? limit;
  if (sizeText !== undefined && !PAGE_SIZE.test(sizeText)) syntax(sizeParameter, 'is a whole number of records', 'INVALID_TYPE');
  return {
    sizeParameter,
    ...(sizeText !== undefined ? { size: Number(sizeText) } : {}),
    tokenParameter: cursor !== undefined ? 'cursor' : 'page_token',
  };
}

/** The page token of a list query, sent in `parameter` (parsePage's tokenParameter); an empty one is none. */
export function pageTokenOf(query: RawQuery, parameter: ListQuery['page']['tokenParameter']): string | undefined {
  const token = firstValueOf(query, parameter);
  return token === '' ? undefined : token;
}

/** A parameter's value, the first one of a repeated parameter (which the parser refuses for its own keys). */
function firstValueOf(query: RawQuery, parameter: string): string | undefined {
  const raw = query[parameter];
  return typeof raw === 'string' ? raw : raw?.[0];
}

/**
 * Splits at the commas outside parentheses and double quotes. Unbalanced parentheses or an
 * unterminated quote are refused here, so nothing downstream sees half a value.
 */
export function splitTopLevel(parameter: string, text: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (quoted) {
      if (char === '\\') i += 1;
      else if (char === '"') quoted = false;
    } else if (char === '"') {
      quoted = true;
    } else if (char === '(') {
      depth += 1;
    } else if (char === ')') {
      depth -= 1;
      if (depth < 0) syntax(parameter, 'has a ) without its (');
    } else if (char === ',' && depth === 0) {
      items.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (quoted) syntax(parameter, 'has a quote that is not closed');
  if (depth > 0) syntax(parameter, 'has a ( without its )');
  if (text !== '') items.push(text.slice(start));
  if (items.some((item) => item.trim() === '')) syntax(parameter, 'has an empty item between commas');
  return items;
}

/** `"a,b"` → `a,b` (with `\"` and `\\`); an unquoted value as it is. */
function unquote(parameter: string, value: string): string {
  if (!value.startsWith('"')) return value;
  if (value.length < 2 || !value.endsWith('"')) syntax(parameter, `${value} is not a closed "quoted value"`);
  const inner = value.slice(1, -1);
  if (/(^|[^\\])(\\\\)*"/.test(inner)) syntax(parameter, `${value}: a quote inside a quoted value is written \\"`);
  return inner.replace(/\\(.)/g, '$1');
}
