import { problems } from '../../../common/problems';
import { authOf } from '../../context';
import type { MoneyDeps } from '../../../services/money/deps';
import { idempotencyKeyOf } from '../../../services/money/mutation';
import { reverse } from '../../../services/money/operations';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { reversalABody, reversalBBody, type ReversalABody, type ReversalBBody } from './reversals.schemas';
import { transaction, transactionIdParams, type TransactionIdParams } from './transactions.schemas';
import { answer } from './wallets.routes';
import { walletIdParams, type WalletIdParams } from './wallets.schemas';

type NoParams = Record<string, never>;

const RULES = 'Credits back a completed debit or a confirmed hold of the last MONEY_REVERSAL_MAX_AGE_DAYS (365) days '
  + 'with a counter-transaction and marks the original reversed. held → 400 hold-not-reversible; already reversed → 400 '
  + 'double-reversal; too old → 400 reversal-window-expired; canceled and other types → 400 transaction-not-reversible. '
  + 'Requires the Idempotency-Key header and money.reverse.';

/** Document 2, Money: reversals in both route sets (set A names the original in the path, set B in the body). */
export function reversalRoutes(deps: MoneyDeps): AnyRoute[] {
  return [
    defineRoute<TransactionIdParams, NoParams, ReversalABody>({
      namespace: 'money', method: 'POST', path: '/transactions/:id/reversal', operationId: 'money.transactions.reverse',
      summary: 'Reverses a transaction (route set A)',
      description: RULES,
      auth: 'bearer', permission: 'money.reverse',
      schemas: { params: transactionIdParams, body: reversalABody, response: { 200: transaction } },
      async handler(ctx) {
        const key = idempotencyKeyOf(ctx.get('Idempotency-Key') || undefined);
        const { params, body } = ctx.guard;
        if (body.originalTransactionId !== undefined && body.originalTransactionId !== params.id) {
          throw problems.validation([{ field: 'originalTransactionId', code: 'INVALID_VALUE', message: 'must be the transaction of the path' }]);
        }
        answer(ctx, await reverse(deps, authOf(ctx), {
          scope: 'POST /transactions/:id/reversal', originalTransactionId: params.id, reason: body.reason,
          request: { id: params.id, reason: body.reason },
        }, key));
      },
    }),
    defineRoute<WalletIdParams, NoParams, ReversalBBody>({
      namespace: 'money', method: 'POST', path: '/wallets/:id/reversal', operationId: 'money.wallets.reverse',
      summary: 'Reverses a transaction of the wallet (route set B)',
      description: RULES,
      auth: 'bearer', permission: 'money.reverse',
      schemas: { params: walletIdParams, body: reversalBBody, response: { 200: transaction } },
      async handler(ctx) {
        const key = idempotencyKeyOf(ctx.get('Idempotency-Key') || undefined);
        const { params, body } = ctx.guard;
        answer(ctx, await reverse(deps, authOf(ctx), {
          scope: 'POST /wallets/:id/reversal', originalTransactionId: body.originalTransactionId, walletId: params.id,
          reason: body.reason, request: { walletId: params.id, ...body },
        }, key));
      },
    }),
  ];
}
