import Joi from 'joi';
import { transactionView, type TransactionView } from './views';
import { problems } from '../../common/problems';
import { withTenant } from '../../db/tenant';
import {
  selectTransaction, selectTransactionHistory, type HistoryKeyset, type TransactionStatus, type TransactionType,
} from '../../db/queries/money/transactions.queries';
import { selectWallet } from '../../db/queries/money/wallets.queries';
import type { AuthState } from '../../common/context';
import { decodePageToken, encodePageToken } from '../../common/pagination';
import { PAGE_SIZE_DEFAULT } from '../../common/pagination';
import type { MoneyDeps } from './deps';

export interface HistoryFilters {
  type?: TransactionType;
  status?: TransactionStatus;
  since?: string;
  until?: string;
}

/**
 * Which page envelope the caller speaks: set A's page_size/page_token answers {data, next_page_token},
 * set B's limit/cursor answers {data, meta: {cursor, hasMore}} (the envelopes of
 * docs/reference/conventions.md#rule-11 and #rule-13, as the audit lists answer them).
 */
export type HistoryPage =
  | { style: 'page'; size?: number; token?: string }
  | { style: 'cursor'; size?: number; token?: string };

export type HistoryAnswer =
  | { data: TransactionView[]; next_page_token?: string }
  | { data: TransactionView[]; meta: { cursor: string | null; hasMore: boolean } };

const historyPosition = Joi.object<HistoryKeyset>({ createdAt: Joi.string().isoDate(), id: Joi.string().guid() });

/** A wallet's transactions, newest first, a keyset page at a time; 404 for an unknown or foreign wallet. */
export async function listHistory(
  deps: MoneyDeps, auth: AuthState, walletId: string, filters: HistoryFilters, page: HistoryPage,
): Promise<HistoryAnswer> {
  const size = page.size ?? PAGE_SIZE_DEFAULT;
  const after = decodePageToken(page.token, historyPosition, page.style === 'page' ? 'page_token' : 'cursor') ?? undefined;
  const rows = await withTenant(deps.db, auth.tenantId, async (tx) => {
    if (!await selectWallet(tx, auth.tenantId, walletId)) throw problems.notFound('wallet');
    // One row more than the page tells whether another page exists.
    return selectTransactionHistory(tx, { walletId, ...filters, after, limit: size + 1 });
  });
  const data = rows.slice(0, size);
  const last = data[data.length - 1];
  const next = rows.length > size ? encodePageToken({ createdAt: last.createdAt, id: last.id }) : null;
  const views = data.map(transactionView);
  if (page.style === 'cursor') return { data: views, meta: { cursor: next, hasMore: next !== null } };
  return next ? { data: views, next_page_token: next } : { data: views };
}

/** GET /transactions/:id; 404 for an unknown or another tenant's id. */
export async function getTransaction(deps: MoneyDeps, auth: AuthState, id: string): Promise<TransactionView> {
  const row = await withTenant(deps.db, auth.tenantId, (tx) => selectTransaction(tx, auth.tenantId, id));
  if (!row) throw problems.notFound('transaction');
  return transactionView(row);
}
