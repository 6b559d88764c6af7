import { isUuid } from '../../common/ids';
import { problems } from '../../common/problems';

/**
 * Keyset page tokens for lists ordered by a UUID v7 id: the token is the last id of the previous
 * page, base64url-encoded so clients treat it as opaque (document 1, Page envelope). A token that
 * does not decode to an id is a validation error on `field`, never a silent first page.
 */
export function encodePageToken(lastId: string): string {
  return Buffer.from(`after:${lastId}`).toString('base64url');
}

export function decodePageToken(token: string, field = 'page_token'): string {
  const decoded = Buffer.from(token, 'base64url').toString('utf8');
  const id = decoded.startsWith('after:') ? decoded.slice('after:'.length) : '';
  if (!isUuid(id)) {
    throw problems.validation([{ field, code: 'INVALID_VALUE', message: `${field} is not a token this list issued` }]);
  }
  return id;
}

/**
 * Splits a result fetched with one row more than the page size into the page and the token of the
 * next one (absent on the last page).
 */
export function pageFrom<T extends { id: string }>(rows: readonly T[], pageSize: number): { data: T[]; next_page_token?: string } {
  if (rows.length <= pageSize) return { data: [...rows] };
  const data = rows.slice(0, pageSize);
  return { data, next_page_token: encodePageToken(data[data.length - 1].id) };
}
