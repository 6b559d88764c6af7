import { authOf } from '../../context';
import type { MoneyFlows } from '../../../services/money/workflow-client';
import { idempotencyHeaders, type IdempotencyHeaders } from '../../http/headers';
import { defineRoute, feeds, type AnyRoute, type RouteDefinition } from '../../http/route-registry';
import { answerFlow, OVERLOAD_ANSWERS } from './flow-answer';
import { flowAccepted, transactionResponse } from './holds.schemas';
import { transferBody, type TransferBody } from './transfers.schemas';

type Empty = Record<string, never>;

/** Transfers (docs/reference/money.md#rule-9; workflow-backed: workflows/money/transfer.workflow.ts), route sets A and B. */
export function transferRoutes(flows: MoneyFlows): AnyRoute[] {
  const transfer = (path: string, operationId: string): RouteDefinition<Empty, Empty, TransferBody, IdempotencyHeaders> => defineRoute<Empty, Empty, TransferBody, IdempotencyHeaders>({
    namespace: 'money', method: 'POST', path, operationId,
    summary: 'Moves an amount from one wallet of the tenant to another, atomically',
    description: 'Idempotency-Key (UUID v4 or v7) is required (400). Answers the outgoing transaction; the destination gets an incoming one '
      + 'referencing it. insufficient-funds 400; the two wallets must differ and hold the currency (400); an unknown or '
      + `another tenant's wallet 404; plan maxTxAmount or the destination's maxBalance 402.${OVERLOAD_ANSWERS}`,
    auth: 'bearer', permission: 'money.write', billing: 'money', ownDeadline: true,
    schemas: {
      headers: idempotencyHeaders, body: transferBody, response: { 200: transactionResponse, 202: flowAccepted },
      links: { 200: feeds(['money.transactions.get', 'money.transactions.reverse']) },
    },
    async handler(ctx) {
      answerFlow(ctx, await flows.transfer(authOf(ctx).tenantId, ctx.guard.body, ctx.guard.headers['Idempotency-Key']));
    },
  });
  return [transfer('/transfers', 'money.transfers.create'), transfer('/wallets/transfer', 'money.wallets.transfer')];
}
