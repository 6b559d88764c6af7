import { problems } from '../../../common/problems';
import { authOf } from '../../context';
import type { MoneyDeps } from '../../../services/money/deps';
import { reverse } from '../../../services/money/operations';
import { idempotencyHeaders, type IdempotencyHeaders } from '../../http/headers';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { reversalABody, reversalBBody, type ReversalABody, type ReversalBBody } from './reversals.schemas';
import { transaction, transactionIdParams, type TransactionIdParams } from './transactions.schemas';
import { answer } from './wallets.routes';
import { walletIdParams, type WalletIdParams } from './wallets.schemas';

type NoParams = Record<string, never>;

const RULES = 'Credits back a completed debit or a confirmed hold of the last MONEY_REVERSAL_MAX_AGE_DAYS (365) days '
  + 'with a counter-transaction and marks the original reversed. held → 400 hold-not-reversible; already reversed → 400 '
  + 'double-reversal; too old → 400 reversal-window-expired; canceled and other types → 400 transaction-not-reversible. '
  + 'Requires the Idempotency-Key header (UUID v4 or v7) and money.reverse.';

/** Reversals (docs/reference/money.md#rule-10) in both route sets (set A names the original in the path, set B in the body). */
export function reversalRoutes(deps: MoneyDeps): AnyRoute[] {
  return [
    defineRoute<TransactionIdParams, NoParams, ReversalABody, IdempotencyHeaders>({
      namespace: 'money', method: 'POST', path: '/transactions/:id/reversal', operationId: 'money.transactions.reverse',
      summary: 'Reverses a transaction (route set A)',
      description: RULES,
      auth: 'bearer', permission: 'money.reverse',
      schemas: { params: transactionIdParams, headers: idempotencyHeaders, body: reversalABody, response: { 200: transaction } },
      async handler(ctx) {
        const { params, body, headers } = ctx.guard;
        if (body.originalTransactionId !== undefined && body.originalTransactionId !== params.id) {
          throw problems.validation([{ field: 'originalTransactionId', code: 'INVALID_VALUE', message: 'must be the transaction of the path' }]);
        }
        answer(ctx, await reverse(deps, authOf(ctx), {
          scope: 'POST /transactions/:id/reversal', originalTransactionId: params.id, reason: body.reason,
          request: { id: params.id, reason: body.reason },
        }, headers['Idempotency-Key']));
      },
    }),
    defineRoute<WalletIdParams, NoParams, ReversalBBody, IdempotencyHeaders>({
      namespace: 'money', method: 'POST', path: '/wallets/:id/reversal', operationId: 'money.wallets.reverse',
      summary: 'Reverses a transaction of the wallet (route set B)',
      description: RULES,
      auth: 'bearer', permission: 'money.reverse',
      schemas: { params: walletIdParams, headers: idempotencyHeaders, body: reversalBBody, response: { 200: transaction } },
      async handler(ctx) {
        const { params, body, headers } = ctx.guard;
        answer(ctx, await reverse(deps, authOf(ctx), {
          scope: 'POST /wallets/:id/reversal', originalTransactionId: body.originalTransactionId, walletId: params.id,
          reason: body.reason, request: { walletId: params.id, ...body },
        }, headers['Idempotency-Key']));
      },
    }),
  ];
}
