import { ApplicationFailure, allHandlersFinished, condition, setHandler } from '@temporalio/workflow';
import { holdPlaced, settleHold, type HoldInput, type HoldOutcome, type HoldResult, type TransactionView } from './money.messages';
import { background, checkSameRequest, refusalOf, refusedOrThrow, requested } from './local-activities';

/**
 * One hold (docs/reference/money.md, rules 7 and 8), started by the gateway with
 * update-with-start under the workflow id `money.hold:<tenantId>:<Idempotency-Key>`:
 *
 *   placed   the first local activity moves available → frozen; the holdPlaced update answers it
 *            (or fails with its refusal, which is also the result the workflow completes with: a
 *            refusal stores nothing, so the gateway lets the key be tried again).
 *   held     a timer runs to the hold's expiresAt; confirm and cancel arrive as settleHold updates,
 *            one at a time, and answer their transaction; a refused one (hold-settled, hold-expired)
 *            fails its update only, never the workflow.
 *   expired  the timer fired with nobody settling: frozen → available, money.hold.expired, audit.
 *
 * The database decides every transition under the wallet's lock (a confirm whose hold is past its
 * expiresAt is refused there too), so the 60 s sweep and this timer can never both release a hold.
 */
export async function moneyHold(input: HoldInput): Promise<HoldResult> {
  let placed: TransactionView | undefined;
  let refusal: unknown;
  // A settlement or the expiry is running: the others wait, so they never race each other.
  let busy = false;
  let outcome: HoldOutcome | undefined;

  setHandler(holdPlaced, async ({ requestHash }) => {
    checkSameRequest(input.idempotency.requestHash, requestHash);
    await condition(() => placed !== undefined || refusal !== undefined);
    if (!placed) throw refusal;
    return placed;
  });

  setHandler(settleHold, async (request) => {
    await condition(() => (placed !== undefined || refusal !== undefined) && !busy);
    if (!placed) throw refusal;
    if (outcome === 'expired') throw holdExpired(placed.id);
    busy = true;
    try {
      const settlement = await requested.settleHold({ tenantId: input.tenantId, holdId: placed.id, ...request });
      outcome ??= request.action === 'confirm' ? 'confirmed' : 'canceled';
      return settlement;
    } catch (error) {
      const failure = refusalOf(error);
      // The database says the hold expired (the sweep got there first): so is the workflow.
      if (failure instanceof ApplicationFailure && failure.type === 'hold-expired') outcome ??= 'expired';
      throw failure;
    } finally {
      busy = false;
    }
  });

  try {
    placed = await requested.placeHold(input);
  } catch (error) {
    refusal = refusalOf(error);
    await condition(allHandlersFinished);
    return refusedOrThrow(refusal);
  }

  const expiresAt = Date.parse(placed.expiresAt ?? '');
  while (outcome === undefined) {
    const remaining = expiresAt - Date.now();
    if (busy) {
      await condition(() => !busy);
    } else if (remaining > 0) {
      await condition(() => busy || outcome !== undefined, remaining);
    } else {
      busy = true;
      await background.expireHold({ tenantId: input.tenantId, holdId: placed.id });
      outcome = 'expired';
      busy = false;
    }
  }
  await condition(allHandlersFinished);
  return { ok: true, holdTransactionId: placed.id, outcome };
}

function holdExpired(holdId: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'hold-expired', nonRetryable: true, message: `Hold ${holdId} expired and its funds were released`,
  });
}
