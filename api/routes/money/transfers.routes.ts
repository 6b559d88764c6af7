import { authOf } from '../../context';
import type { MoneyFlows } from '../../../services/money/workflow-client';
import { defineRoute, type AnyRoute, type RouteDefinition } from '../../http/route-registry';
import { idempotencyKeyOf } from '../../../services/money/mutation';
import { transactionResponse } from './holds.schemas';
import { transferBody, type TransferBody } from './transfers.schemas';

type Empty = Record<string, never>;

/** Document 2, Money: transfers (workflow-backed: workflows/money/transfer.workflow.ts), route sets A and B. */
export function transferRoutes(flows: MoneyFlows): AnyRoute[] {
  const transfer = (path: string, operationId: string): RouteDefinition<Empty, Empty, TransferBody> => defineRoute<Empty, Empty, TransferBody>({
    namespace: 'money', method: 'POST', path, operationId,
    summary: 'Moves an amount from one wallet of the tenant to another, atomically',
    description: 'Idempotency-Key is required (400). Answers the outgoing transaction; the destination gets an incoming one '
      + 'referencing it. insufficient-funds 400; the two wallets must differ and hold the currency (400); an unknown or '
      + 'another tenant\'s wallet 404; plan maxTxAmount or the destination\'s maxBalance 402.',
    auth: 'bearer', permission: 'money.write', billing: 'money',
    schemas: { body: transferBody, response: { 200: transactionResponse } },
    async handler(ctx) {
      const key = idempotencyKeyOf(ctx.headers['idempotency-key']);
      ctx.body = await flows.transfer(authOf(ctx).tenantId, ctx.guard.body, key);
    },
  });
  return [transfer('/transfers', 'money.transfers.create'), transfer('/wallets/transfer', 'money.wallets.transfer')];
}
