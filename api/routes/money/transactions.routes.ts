import { authOf } from '../../context';
import type { MoneyDeps } from '../../../services/money/deps';
import { getTransaction, listHistory, type HistoryFilters, type HistoryPage } from '../../../services/money/history';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { walletIdParams, type WalletIdParams } from './wallets.schemas';
import {
  historyAQuery, historyBQuery, historyResponse, transaction, transactionIdParams,
  type HistoryAQuery, type HistoryQuery, type TransactionIdParams,
} from './transactions.schemas';

type NoParams = Record<string, never>;

const FILTERS = 'Filters type, status, since (inclusive), until (exclusive); newest first. page_size/page_token answer '
  + '{data, next_page_token}, limit/cursor answer {data, meta {cursor, hasMore}}; 1 to 100, default 20.';

/** The query's filters and page request; `fallback` is the envelope of a request that names neither pair. */
function split(query: HistoryQuery, fallback: HistoryPage['style']): { filters: HistoryFilters; page: HistoryPage } {
  const { type, status, since, until, page_size, page_token, limit, cursor } = query;
  const style = limit !== undefined || cursor !== undefined ? 'cursor'
    : page_size !== undefined || page_token !== undefined ? 'page' : fallback;
  return {
    filters: { type, status, since, until } as HistoryFilters,
    page: style === 'cursor' ? { style, size: limit, token: cursor } : { style, size: page_size, token: page_token },
  };
}

/** Transaction history in both route sets (docs/reference/money.md#rule-17), and one transaction. */
export function transactionRoutes(deps: MoneyDeps): AnyRoute[] {
  return [
    defineRoute<NoParams, HistoryAQuery>({
      namespace: 'money', method: 'GET', path: '/transactions', operationId: 'money.transactions.list',
      summary: 'A wallet’s transactions (route set A: ?walletId=)',
      description: FILTERS,
      auth: 'bearer', permission: 'money.read',
      schemas: { query: historyAQuery, response: { 200: historyResponse } },
      async handler(ctx) {
        const { walletId, ...rest } = ctx.guard.query;
        const { filters, page } = split(rest, 'page');
        ctx.body = await listHistory(deps, authOf(ctx), walletId, filters, page);
      },
    }),
    defineRoute<WalletIdParams, HistoryQuery>({
      namespace: 'money', method: 'GET', path: '/wallets/:id/transactions', operationId: 'money.wallets.transactions',
      summary: 'A wallet’s transactions (route set B)',
      description: FILTERS,
      auth: 'bearer', permission: 'money.read',
      schemas: { params: walletIdParams, query: historyBQuery, response: { 200: historyResponse } },
      async handler(ctx) {
        const { filters, page } = split(ctx.guard.query, 'cursor');
        ctx.body = await listHistory(deps, authOf(ctx), ctx.guard.params.id, filters, page);
      },
    }),
    defineRoute<TransactionIdParams>({
      namespace: 'money', method: 'GET', path: '/transactions/:id', operationId: 'money.transactions.get',
      summary: 'One transaction',
      auth: 'bearer', permission: 'money.read',
      schemas: { params: transactionIdParams, response: { 200: transaction } },
      async handler(ctx) {
        ctx.body = await getTransaction(deps, authOf(ctx), ctx.guard.params.id);
      },
    }),
  ];
}
