import Joi from 'joi';
import { problems } from './problems';

/** docs/reference/conventions.md#rule-11: `page_size` defaults to 20 and may not exceed 100. */
export const PAGE_SIZE_DEFAULT = 20;
export const PAGE_SIZE_MAX = 100;

/** A list's page request, validated at the edge: `page_size`/`page_token`, or `limit`/`cursor` where the reference says so (docs/reference/conventions.md#rule-13). */
export interface PageQuery { page_size: number; page_token?: string }
export interface CursorQuery { limit: number; cursor?: string }

/**
 * Page tokens of keyset pagination: the sort key of the last item of a page, as URL-safe base64 of
 * JSON. Clients never parse them (docs/reference/conventions.md#rule-12); the server checks a token it is handed
 * back against the shape it wrote, so a forged or foreign token is a 400, never a SQL error.
 */
export function encodePageToken(position: Readonly<Record<string, unknown>>): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

export function decodePageToken<T>(
  token: string | undefined, shape: Joi.ObjectSchema<T>, field = 'page_token', context?: Record<string, unknown>,
): T | null {
  if (token === undefined || token === '') return null;
  let position: unknown;
  try {
    position = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    position = undefined;
  }
  const checked = shape.validate(position, { presence: 'required', allowUnknown: false, context });
  if (position === undefined || checked.error) {
    throw problems.validation([{ field, message: 'is not a page token of this list', code: 'INVALID_FORMAT' }]);
  }
  return checked.value;
}

/** The position of lists ordered by a UUID v7 id alone. */
export const idPosition = Joi.object<{ id: string }>({ id: Joi.string().guid() });

/**
 * Splits a result fetched with one row more than the page size into the page and the token of the
 * next one (absent on the last page), for lists ordered by id.
 */
export function pageFrom<T extends { id: string }>(rows: readonly T[], pageSize: number): { data: T[]; next_page_token?: string } {
  if (rows.length <= pageSize) return { data: [...rows] };
  const data = rows.slice(0, pageSize);
  return { data, next_page_token: encodePageToken({ id: data[data.length - 1].id }) };
}

/**
 * Lists that speak both envelopes of docs/reference/conventions.md (rules 11 and 13): page_size/page_token answer {data, next_page_token},
 * limit/cursor answer {data, meta: {cursor, hasMore}}. Both are the same keyset page; the token is
 * opaque to clients either way.
 */
export type PageStyle = 'page' | 'cursor';

export interface KeysetPageRequest {
  style: PageStyle;
  size: number;
  token?: string;
}

export type KeysetPage<T> =
  | { data: T[]; next_page_token?: string }
  | { data: T[]; meta: { cursor: string | null; hasMore: boolean } };

/** A list's query with both pairs (api/http/pagination.ts eitherPageQuery, which keeps them apart). */
export interface EitherPageQuery {
  page_size?: number;
  page_token?: string;
  limit?: number;
  cursor?: string;
}

/** The pair the caller used picks the envelope; with neither, `fallback`. */
export function pageRequestOf(query: EitherPageQuery, fallback: PageStyle = 'page'): KeysetPageRequest {
  const style: PageStyle = query.limit !== undefined || query.cursor !== undefined ? 'cursor'
    : query.page_size !== undefined || query.page_token !== undefined ? 'page' : fallback;
  return style === 'cursor'
    ? { style, size: query.limit ?? PAGE_SIZE_DEFAULT, token: query.cursor }
    : { style, size: query.page_size ?? PAGE_SIZE_DEFAULT, token: query.page_token };
}

/** The position a request's token names, checked against the list's keyset shape (400 naming the parameter used). */
export function positionOf<T>(request: KeysetPageRequest, shape: Joi.ObjectSchema<T>): T | undefined {
  return decodePageToken(request.token, shape, request.style === 'page' ? 'page_token' : 'cursor') ?? undefined;
}

/**
 * The answer for rows fetched with one more than the page size (the extra row only says another
 * page exists), in the request's envelope; `position` is the keyset of a row, written into the token.
 */
export function keysetPageOf<R, V>(
  rows: readonly R[], request: KeysetPageRequest, position: (row: R) => Readonly<Record<string, unknown>>, view: (row: R) => V,
): KeysetPage<V> {
  const hasMore = rows.length > request.size;
  const kept = rows.slice(0, request.size);
  const last = kept.at(-1);
  const next = hasMore && last !== undefined ? encodePageToken(position(last)) : undefined;
  const data = kept.map(view);
  if (request.style === 'cursor') return { data, meta: { cursor: next ?? null, hasMore } };
  return next === undefined ? { data } : { data, next_page_token: next };
}
