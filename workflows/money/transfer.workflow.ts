import { allHandlersFinished, condition, setHandler } from '@temporalio/workflow';
import { transferDone, type TransactionView, type TransferInput, type TransferResult } from './money.messages';
import { checkSameRequest, refusalOf, refusedOrThrow, requested } from './local-activities';

/**
 * One transfer, started by the gateway with update-with-start under the workflow id
 * `money.transfer:<tenantId>:<Idempotency-Key>`; the transferDone update answers the outgoing
 * transaction in the same round trip. The work is one local activity: both wallets locked in
 * ascending id order in one database transaction, a deadlock or serialization failure retried 3
 * times at 100, 200 and 400 ms (docs/reference/money.md#rule-9). A refusal is the update's failure and
 * the workflow's result (it completes: a 4xx is no fault); it stores nothing, so the gateway lets the
 * same key be tried again once the cause is gone (a topped-up wallet).
 */
export async function moneyTransfer(input: TransferInput): Promise<TransferResult> {
  let result: TransactionView | undefined;
  let refusal: unknown;

  setHandler(transferDone, async ({ requestHash }) => {
    checkSameRequest(input.idempotency.requestHash, requestHash);
    await condition(() => result !== undefined || refusal !== undefined);
    if (!result) throw refusal;
    return result;
  });

  try {
    result = await requested.transfer(input);
  } catch (error) {
    refusal = refusalOf(error);
  }
  await condition(allHandlersFinished);
  return result ? { ok: true, transaction: result } : refusedOrThrow(refusal);
}
