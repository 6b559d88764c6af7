import Joi from 'joi';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../../../common/pagination';
import { SLUG_PATTERN } from '../../../services/modules/manifest';
import { uuid } from '../../http/ids';
import { cursorQuery, pageQuery } from '../../http/pagination';

/**
 * Request and response schemas of the record routes (docs/reference/data.md#resources). The records' own
 * fields are the model's, checked by the service against the manifest (services/data/record-validation.ts),
 * and the query string is the query language, checked by its parser (services/data/query/); these
 * schemas check what is the same for every model.
 */

export interface ModelParams {
  module: string;
  model: string;
}

export interface RecordParams extends ModelParams {
  id: string;
}

/** The manifest grammar of slugs and model names (services/modules/manifest.ts). */
const modelParams = {
  module: Joi.string().pattern(SLUG_PATTERN, 'module slug').required(),
  model: Joi.string().pattern(/^[a-z][a-z0-9_]{0,62}$/, 'model name').required(),
};

export const modelPathParams = Joi.object<ModelParams>(modelParams);
export const recordPathParams = Joi.object<RecordParams>({ ...modelParams, id: uuid.required() });

/** No default: which pair was sent picks the envelope (as money's history: api/routes/money/transactions.schemas.ts). */
const size = Joi.number().integer().min(1).max(PAGE_SIZE_MAX);
const languageValue = Joi.alternatives().try(Joi.string(), Joi.array().items(Joi.string()));

/**
 * Every other key is a filter, `field=operator.value` (the validation guard refuses unknown keys
 * elsewhere; here they are the language). The handler hands the raw query string to the parser,
 * which checks all of it; this schema documents the keys every list takes and refuses mixed pairs.
 */
const listKeys = {
  select: Joi.string().description('Fields and embedded relations: `a,b,relation(c,relation2(d))`, at most 2 levels deep'),
  order: Joi.string().description('`field.asc,field.desc`; the id breaks ties'),
  or: Joi.string().description('`(field.op.value,field.op.value)`: conditions joined by OR'),
  page_size: size.description(`Records per page (1 to ${PAGE_SIZE_MAX}, default ${PAGE_SIZE_DEFAULT}); answers {data, next_page_token}`),
  page_token: pageQuery.page_token,
  limit: size.description(`Records per page (1 to ${PAGE_SIZE_MAX}, default ${PAGE_SIZE_DEFAULT}); answers {data, meta {cursor, hasMore}}; not with page_size or page_token`),
  cursor: cursorQuery.cursor,
  offset: Joi.number().integer().valid(0).description(
    'Only 0, the first page, as PostgREST clients send it (`range(0, n)`): lists are keyset pages, a later one is reached with its token',
  ),
};

/** The keys every list takes, with `keys` added or narrowed (one model's query in the data document: model-operations.ts). */
export function listQueryWith(keys: Joi.PartialSchemaMap = {}): Joi.ObjectSchema {
  return Joi.object({ ...listKeys, ...keys })
    .without('limit', ['page_size', 'page_token'])
    .without('cursor', ['page_size', 'page_token'])
    .without('offset', ['page_token', 'cursor']);
}

export const listQuery = listQueryWith().pattern(/^/, languageValue);

/** The grammar of the other keys, for the list route's description (OpenAPI lists only the declared keys). */
export const FILTER_GRAMMAR = 'Any other key is a filter on a field of the model, `field=op.value`: eq, neq, gt, lt, gte, lte, '
  + 'like and ilike (`*` or `%` as wildcard), `in.(a,b)`, `is.null`, `is.notnull`, each negated by a `not.` prefix (`not.in.(a,b)`); '
  + 'at most 10 (400 filter-limit-exceeded); '
  + 'an unknown field or operator is 400 validation-error.';

/** GET one record: only `select=`. */
export const recordQuery = Joi.object({
  select: Joi.string().description('Fields and embedded relations: `a,b,relation(c,relation2(d))`, at most 2 levels deep'),
});

/** A record's fields; which ones and their types are the model's (the service checks them). */
export const recordBody = Joi.object().unknown(true);

/** A record: id, tenantId, createdAt, updatedAt, deletedAt and the model's fields, or those `select=` named. */
export const record = Joi.object().unknown(true);

/** Sent only with `Prefer: count=exact`. */
const count = Joi.number().integer().min(0)
  .description('Every record the filters match, whatever the page; only with `Prefer: count=exact`');

/** The two envelopes of a list of `item`s (records of any model, or of one in the data document). */
export function listEnvelope(item: Joi.Schema) {
  return Joi.alternatives().try(
    Joi.object({ data: Joi.array().items(item).required(), next_page_token: Joi.string(), count }),
    Joi.object({
      data: Joi.array().items(item).required(),
      meta: Joi.object({ cursor: Joi.string().allow(null).required(), hasMore: Joi.boolean().required() }).required(),
      count,
    }),
  );
}

export const recordList = listEnvelope(record);

/**
 * `Prefer: count=exact` (RFC 7240; PostgREST's): the list also answers `count`, and says so in
 * `Preference-Applied`. Other preferences are ignored, as RFC 7240 lets a server do.
 */
export const listHeaders = Joi.object({
  Prefer: Joi.string().max(200).description('`count=exact`: the answer also has `count`, every record the filters match; other preferences are ignored'),
});

/**
 * The headers of a list's 200 (the route's and each model's operation in the data document):
 * PostgREST's `Content-Range`, which its clients read the count from, and `Preference-Applied`.
 */
export const listResponseHeaders = Joi.object({
  'Content-Range': Joi.string().pattern(/^([0-9]+-[0-9]+|\*)\/([0-9]+|\*)$/, 'range').required().description(
    '`first-last/total` (row offsets in the whole list, from 0), the total only with `Prefer: count=exact` and `*` otherwise; '
    + 'an empty page is `*/0` with the count and `*/*` without. The status stays 200.',
  ),
  'Preference-Applied': Joi.string().valid('count=exact').description('Sent when `Prefer: count=exact` was applied'),
});

/**
 * `Content-Range` of a list page (PostgREST's form, RFC 9110 with `items` left out): the offsets of
 * its first and last record in the whole list and the total when counted; `*` for the range of an
 * empty page and for a total not counted.
 */
export function contentRangeOf(pageStart: number, rows: number, total: number | undefined): string {
  const range = rows === 0 ? '*' : `${pageStart}-${pageStart + rows - 1}`;
  return `${range}/${total ?? '*'}`;
}

export function prefersExactCount(prefer: string | undefined): boolean {
  return prefer !== undefined && prefer.split(',').some((preference) => /^\s*count\s*=\s*"?exact"?\s*(;|$)/i.test(preference));
}
