import { allHandlersFinished, condition, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import { noopDone } from './noop.messages';

/**
 * The Temporal ceiling of bench/money-flows.bench.ts: moneyTransfer's shape (workflows/money/transfer.workflow.ts)
 * with the database transaction taken out. Started by update-with-start as the gateway starts a
 * transfer; one local activity that does nothing; the update answers its result.
 */
const { noop } = proxyLocalActivities<{ noop(): Promise<string> }>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '100 milliseconds', backoffCoefficient: 2, maximumAttempts: 4 },
});

export async function benchNoop(): Promise<string> {
  let result: string | undefined;
  setHandler(noopDone, async () => {
    await condition(() => result !== undefined);
    return result!;
  });
  result = await noop();
  await condition(allHandlersFinished);
  return result;
}
