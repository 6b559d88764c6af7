import { authOf } from '../../context';
import type { MoneyDeps } from '../../../services/money/deps';
import { moveMoney, type MoneyBody } from '../../../services/money/operations';
import { createWallet, getBalance, getWallet, listWallets, type NewWalletBody, type WalletListQuery } from '../../../services/money/wallets';
import { idempotencyHeaders, optionalIdempotencyHeaders, type IdempotencyHeaders } from '../../http/headers';
import { defineRoute, feeds, type AnyRoute, type RouteContext } from '../../http/route-registry';
import {
  balance, moneyBody, newWalletBody, operationResult, wallet, walletIdParams, walletList, walletListQuery, type WalletIdParams,
} from './wallets.schemas';

type NoParams = Record<string, never>;

const IDEMPOTENCY = 'Requires the Idempotency-Key header (UUID v4 or v7): the same key and body answer the same result, another body 409.';

/**
 * Wallets and the single-step operations on them (credit, debit; docs/reference/money.md#resources). Another
 * tenant's wallet is 404 like an unknown id. Moving money needs money.write and a verified e-mail.
 */
export function walletRoutes(deps: MoneyDeps): AnyRoute[] {
  const move = (kind: 'credit' | 'debit') => defineRoute<WalletIdParams, NoParams, MoneyBody, IdempotencyHeaders>({
    namespace: 'money', method: 'POST', path: `/wallets/:id/${kind}`, operationId: `money.wallets.${kind}`,
    summary: kind === 'credit' ? 'Adds money to a wallet’s available balance' : 'Takes money from a wallet’s available balance',
    description: `${IDEMPOTENCY} amount is a positive integer in minor units (400 invalid-amount otherwise); `
      + (kind === 'debit' ? 'more than the available balance is 400 insufficient-funds; ' : 'a balance above the plan’s maxBalance is 402; ')
      + 'above the plan’s maxTxAmount is 402 plan-limit-exceeded; 403 until the caller’s e-mail is verified.',
    // A suspended tenant's users can still move their money (docs/reference/billing.md#rule-14).
    auth: 'bearer', permission: 'money.write', billing: 'money',
    schemas: {
      params: walletIdParams, headers: idempotencyHeaders, body: moneyBody, response: { 200: operationResult },
      links: { 200: feeds(['money.transactions.get', 'money.transactions.reverse'], { from: '$response.body#/transactionId' }) },
    },
    async handler(ctx) {
      const { params, body, headers } = ctx.guard;
      answer(ctx, await moveMoney(deps, authOf(ctx), kind, params.id, body, headers['Idempotency-Key']));
    },
  });

  return [
    defineRoute<NoParams, NoParams, NewWalletBody, Partial<IdempotencyHeaders>>({
      namespace: 'money', method: 'POST', path: '/wallets', operationId: 'money.wallets.create',
      summary: 'Creates a wallet for a user of the tenant in one currency',
      description: 'One wallet per user, currency and label (409 conflict otherwise); a userId that is not a member of the '
        + 'tenant is 404. An Idempotency-Key header is honoured when sent.',
      auth: 'bearer', permission: 'money.write',
      schemas: {
        headers: optionalIdempotencyHeaders, body: newWalletBody, response: { 201: wallet },
        links: {
          201: {
            ...feeds(['money.wallets.get', 'money.wallets.balance', 'money.wallets.credit', 'money.wallets.debit', 'money.wallets.transactions', 'money.wallets.hold', 'money.wallets.reverse']),
            'money.transfers.create': { requestBody: { fromWalletId: '$response.body#/id' } },
            'money.wallets.transfer': { requestBody: { toWalletId: '$response.body#/id' } },
          },
        },
      },
      async handler(ctx) {
        answer(ctx, await createWallet(deps, authOf(ctx), ctx.guard.body, ctx.guard.headers['Idempotency-Key']));
      },
    }),
    defineRoute<NoParams, WalletListQuery>({
      namespace: 'money', method: 'GET', path: '/wallets', operationId: 'money.wallets.list',
      summary: 'The tenant’s wallets, a page at a time (filters userId, currency)',
      auth: 'bearer', permission: 'money.read',
      schemas: { query: walletListQuery, response: { 200: walletList } },
      async handler(ctx) {
        ctx.body = await listWallets(deps, authOf(ctx), ctx.guard.query);
      },
    }),
    defineRoute<WalletIdParams>({
      namespace: 'money', method: 'GET', path: '/wallets/:id', operationId: 'money.wallets.get',
      summary: 'A wallet with its balances',
      auth: 'bearer', permission: 'money.read',
      schemas: { params: walletIdParams, response: { 200: wallet } },
      async handler(ctx) {
        ctx.body = await getWallet(deps, authOf(ctx), ctx.guard.params.id);
      },
    }),
    defineRoute<WalletIdParams>({
      namespace: 'money', method: 'GET', path: '/wallets/:id/balance', operationId: 'money.wallets.balance',
      summary: 'A wallet’s balances: available, pending, frozen',
      auth: 'bearer', permission: 'money.read',
      schemas: { params: walletIdParams, response: { 200: balance } },
      async handler(ctx) {
        ctx.body = await getBalance(deps, authOf(ctx), ctx.guard.params.id);
      },
    }),
    move('credit'),
    move('debit'),
  ];
}

/** Answers a stored or fresh idempotent answer: its status and body, byte for byte the same on a replay. */
export function answer(ctx: RouteContext<unknown, unknown, unknown>, result: { statusCode: number; body: unknown }): void {
  ctx.status = result.statusCode;
  ctx.body = result.body;
}
