import { problems } from '../../../common/problems';
import { authOf } from '../../context';
import { parseHoldTtl } from '../../../services/money/hold-ttl';
import type { MoneyFlows } from '../../../services/money/workflow-client';
import { idempotencyHeaders, type IdempotencyHeaders } from '../../http/headers';
import { defineRoute, feeds, type AnyRoute } from '../../http/route-registry';
import { answerFlow, OVERLOAD_ANSWERS } from './flow-answer';
import {
  flowAccepted, holdBody, holdParams, settleBodyA, settleBodyB, transactionResponse, walletParams,
  type HoldBody, type HoldParams, type SettleBody, type WalletParams,
} from './holds.schemas';

type NoQuery = Record<string, never>;

const errors = 'Idempotency-Key (UUID v4 or v7) is required (400). ';

/** Holds (docs/reference/money.md#rule-7 and #rule-8; workflow-backed: workflows/money/hold.workflow.ts). */
export function holdRoutes(flows: MoneyFlows): AnyRoute[] {
  const settleA = (action: 'confirm' | 'cancel') => defineRoute<HoldParams, NoQuery, SettleBody, IdempotencyHeaders>({
    namespace: 'money', method: 'POST', path: `/holds/:id/${action}`, operationId: `money.holds.${action}`,
    summary: action === 'confirm' ? 'Confirms a hold: the frozen amount is debited for good' : 'Cancels a hold: the frozen amount returns to available',
    description: `${errors}An expired hold is 422 hold-expired; a confirmed or canceled one 400 hold-settled. `
      + `holdTransactionId in the body, if given, must be the hold of the path.${OVERLOAD_ANSWERS}`,
    auth: 'bearer', permission: 'money.write', billing: 'money', ownDeadline: true,
    schemas: { params: holdParams, headers: idempotencyHeaders, body: settleBodyA, response: { 200: transactionResponse, 202: flowAccepted } },
    async handler(ctx) {
      const { id } = ctx.guard.params;
      if (ctx.guard.body.holdTransactionId !== undefined && ctx.guard.body.holdTransactionId !== id) {
        throw problems.validation([{ field: 'holdTransactionId', code: 'INVALID_VALUE', message: 'must be the hold of the path' }]);
      }
      answerFlow(ctx, await flows.settle(authOf(ctx).tenantId, action, id, ctx.guard.headers['Idempotency-Key']));
    },
  });
  const settleB = (action: 'confirm' | 'cancel') => defineRoute<WalletParams, NoQuery, SettleBody, IdempotencyHeaders>({
    namespace: 'money', method: 'POST', path: `/wallets/:id/${action}`, operationId: `money.wallets.${action}`,
    summary: action === 'confirm' ? 'Confirms a hold of the wallet (route set B)' : 'Cancels a hold of the wallet (route set B)',
    description: `${errors}The hold must belong to the wallet (404 otherwise).${OVERLOAD_ANSWERS}`,
    auth: 'bearer', permission: 'money.write', billing: 'money', ownDeadline: true,
    schemas: { params: walletParams, headers: idempotencyHeaders, body: settleBodyB, response: { 200: transactionResponse, 202: flowAccepted } },
    async handler(ctx) {
      const { body, headers, params } = ctx.guard;
      answerFlow(ctx, await flows.settle(authOf(ctx).tenantId, action, body.holdTransactionId!, headers['Idempotency-Key'], params.id));
    },
  });
  return [
    defineRoute<WalletParams, NoQuery, HoldBody, IdempotencyHeaders>({
      namespace: 'money', method: 'POST', path: '/wallets/:id/hold', operationId: 'money.wallets.hold',
      summary: 'Holds an amount: available → frozen until confirmed, canceled or expired at its TTL',
      description: `${errors}ttl: \`<integer>(s|m|h|d)\` or ISO 8601, 1 s to 168 h (default ${flows.defaultTtlSeconds / 3600} h). `
        + `insufficient-funds 400; more than MONEY_MAX_HOLDS_PER_WALLET open holds 429 hold-limit-exceeded; plan maxTxAmount 402.${OVERLOAD_ANSWERS}`,
      auth: 'bearer', permission: 'money.write', billing: 'money', ownDeadline: true,
      schemas: {
        params: walletParams, headers: idempotencyHeaders, body: holdBody, response: { 200: transactionResponse, 202: flowAccepted },
        // The hold's id feeds its confirm and cancel in both route sets (set B names the wallet in the path).
        links: {
          200: {
            ...feeds(['money.holds.confirm', 'money.holds.cancel', 'money.transactions.get']),
            ...Object.fromEntries(['money.wallets.confirm', 'money.wallets.cancel'].map((operationId) => [operationId, {
              parameters: { id: '$response.body#/walletId' }, requestBody: { holdTransactionId: '$response.body#/id' },
            }])),
          },
        },
      },
      async handler(ctx) {
        const { amount, currency, ttl, reason } = ctx.guard.body;
        const ttlSeconds = ttl === undefined ? flows.defaultTtlSeconds : parseHoldTtl(ttl);
        if (ttlSeconds === null) {
          throw problems.validation([{ field: 'ttl', code: 'INVALID_VALUE', message: 'must be <integer>(s|m|h|d) or ISO 8601 (PT30M), from 1 s to 168 h' }]);
        }
        const hold = { walletId: ctx.guard.params.id, amount, currency, reason, ttlSeconds };
        answerFlow(ctx, await flows.placeHold(authOf(ctx).tenantId, hold, ctx.guard.headers['Idempotency-Key']));
      },
    }),
    settleA('confirm'),
    settleA('cancel'),
    settleB('confirm'),
    settleB('cancel'),
  ];
}
