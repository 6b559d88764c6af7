import Joi from 'joi';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../../common/pagination';

/**
 * The page envelope of docs/reference/conventions.md#rule-11: `page_size` (default 20, at most 100) and an opaque
 * `page_token`; some lists say `limit` and `cursor` with the same meaning and defaults. A size
 * above 100 is a validation error, never silently capped (the same rule), so callers learn the limit.
 */

const size = Joi.number().integer().min(1).max(PAGE_SIZE_MAX).default(PAGE_SIZE_DEFAULT);
// Tokens are opaque to clients, but they are always base64 (standard or URL-safe) of bounded size.
const token = Joi.string().max(2048).pattern(/^[A-Za-z0-9+/_-]+={0,2}$/, 'base64');

/** Spread into a route's query schema: `Joi.object({ ...pageQuery, status: ... })`. */
export const pageQuery = {
  page_size: size.description('Items per page (1 to 100)'),
  page_token: token.description('next_page_token of the previous page'),
};

export const cursorQuery = {
  limit: size.description('Items per page (1 to 100)'),
  cursor: token.description('Cursor of the previous page; not with page_size or page_token'),
};


/** The response envelope: `data` and `next_page_token` (absent or empty on the last page). */
export function pageOf(item: Joi.Schema): Joi.ObjectSchema {
  return Joi.object({
    data: Joi.array().items(item).required(),
    next_page_token: Joi.string().allow(''),
  });
}

const sizeWithoutDefault = Joi.number().integer().min(1).max(PAGE_SIZE_MAX);

/**
 * Both pairs, for lists that answer either envelope (common/pagination.ts pageRequestOf): no
 * defaults, because which pair the caller used picks the envelope. Spread into the query schema,
 * then wrap it in eitherPageOnly so the pairs do not mix.
 */
export const eitherPageQuery = {
  page_size: sizeWithoutDefault.description(`Items per page (1 to ${PAGE_SIZE_MAX}, default ${PAGE_SIZE_DEFAULT}); answers {data, next_page_token}`),
  page_token: pageQuery.page_token,
  limit: sizeWithoutDefault.description(
    `Items per page (1 to ${PAGE_SIZE_MAX}, default ${PAGE_SIZE_DEFAULT}); answers {data, meta {cursor, hasMore}}; not with page_size or page_token`),
  cursor: cursorQuery.cursor,
};

/** The two pairs do not mix (400 CONFLICTING_FIELDS). */
export function eitherPageOnly<T>(schema: Joi.ObjectSchema<T>): Joi.ObjectSchema<T> {
  return schema.without('limit', ['page_size', 'page_token']).without('cursor', ['page_size', 'page_token']);
}

/** The answer of such a list: either envelope. */
export function eitherPageOf(item: Joi.Schema): Joi.AlternativesSchema {
  return Joi.alternatives().try(
    Joi.object({ data: Joi.array().items(item).required(), next_page_token: Joi.string() }),
    Joi.object({
      data: Joi.array().items(item).required(),
      meta: Joi.object({ cursor: Joi.string().allow(null).required(), hasMore: Joi.boolean().required() }).required(),
    }),
  );
}
