import Joi from 'joi';
import { problems } from './problems';

/** Document 1, Page envelope: `page_size` defaults to 20 and may not exceed 100. */
export const PAGE_SIZE_DEFAULT = 20;
export const PAGE_SIZE_MAX = 100;

/** A list's page request, validated at the edge: `page_size`/`page_token`, or `limit`/`cursor` where the documents say so. */
export interface PageQuery { page_size: number; page_token?: string }
export interface CursorQuery { limit: number; cursor?: string }

/**
 * Page tokens of keyset pagination: the sort key of the last item of a page, as URL-safe base64 of
 * JSON. Clients never parse them (document 1, Page envelope); the server checks a token it is handed
 * back against the shape it wrote, so a forged or foreign token is a 400, never a SQL error.
 */
export function encodePageToken(position: Readonly<Record<string, unknown>>): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

export function decodePageToken<T>(token: string | undefined, shape: Joi.ObjectSchema<T>, field = 'page_token'): T | null {
  if (token === undefined || token === '') return null;
  let position: unknown;
  try {
    position = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    position = undefined;
  }
  const checked = shape.validate(position, { presence: 'required', allowUnknown: false });
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
