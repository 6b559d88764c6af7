import {
  ActivityCancellationType, ApplicationFailure, CancellationScope, condition, getExternalWorkflowHandle, isCancellation,
  log, proxyActivities, setHandler, sleep,
} from '@temporalio/workflow';
import type { TerminationActivities } from '../../activities/billing/termination.activities';
import { subscriptionWorkflowId, tenantRecoveredSignal } from './billing.messages';
import {
  recoverTenantUpdate, TERMINATION_COMPLETED, terminationStateQuery, type TenantTerminationInput, type TerminationPhase, type TerminationState,
} from './termination.messages';

const short = proxyActivities<TerminationActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/**
 * The deleting phases are long and batched: the heartbeat timeout notices a dead worker within a
 * minute, a retry resumes from the phase's checkpoint, and retries never give up (a termination
 * must finish or be recovered). A recovery waits until the running phase has stopped for real.
 */
const phases = proxyActivities<TerminationActivities>({
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '1 minute',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

/**
 * Tenant termination (docs/reference/billing.md#rule-27), started by the subscription workflow at day
 * 38 as `tenant-termination:<tenantId>` on the billing queue: the tenant is soft-deleted at once,
 * then deleting_records, then deleting_files, then completed. Each deleting phase takes at least
 * BILLING_TERMINATION_PHASE_HOURS (the work, then a timer for the rest), so the whole spreads over
 * 24 to 48 hours and the Platform Owner has that long to recover. Recovery (the recoverTenant
 * update) stops the phase in progress, restores the tenant and signals `tenantRecovered` to
 * `subscription:<tenantId>`; after completed it is refused.
 */
export async function tenantTermination({ tenantId }: TenantTerminationInput): Promise<TerminationState> {
  const state: TerminationState = { tenantId, status: 'in_progress', phase: 'deleting_records', startedAt: new Date().toISOString() };
  let recoveryRequested = false;
  const work = new CancellationScope();

  setHandler(terminationStateQuery, () => state);
  setHandler(recoverTenantUpdate, async () => {
    recoveryRequested = true;
    work.cancel();
    await condition(() => state.status === 'recovered');
    return state;
  }, {
    validator: () => {
      if (state.status === 'completed') {
        throw ApplicationFailure.nonRetryable(`The termination of tenant ${tenantId} has completed; it cannot be recovered`, TERMINATION_COMPLETED);
      }
      if (recoveryRequested) throw ApplicationFailure.nonRetryable('A recovery is already under way', 'RecoveryInProgress');
    },
  });

  const { phaseMs } = await short.beginTermination(tenantId, state.startedAt);

  /** Runs one deleting phase, then waits out the rest of its minimum length. */
  async function runPhase(phase: TerminationPhase, deleting: () => Promise<unknown>): Promise<void> {
    const phaseStart = Date.now();
    state.phase = phase;
    await short.enterTerminationPhase(tenantId, phase);
    await deleting();
    const rest = phaseStart + phaseMs - Date.now();
    if (rest > 0) await sleep(rest);
  }

  try {
    await work.run(async () => {
      await runPhase('deleting_records', () => phases.deleteTenantRecords(tenantId));
      await runPhase('deleting_files', () => phases.deleteTenantFiles(tenantId));
    });
  } catch (error) {
    if (!isCancellation(error)) throw error;
  }

  if (recoveryRequested) {
    await short.recoverTenant(tenantId);
    try {
      await getExternalWorkflowHandle(subscriptionWorkflowId(tenantId)).signal(tenantRecoveredSignal);
    } catch (error) {
      // The tenant is recovered either way; an operator moves a subscription that missed the signal.
      log.error('the subscription workflow could not be told of the recovery', { tenantId, error: String(error) });
    }
    state.status = 'recovered';
    return state;
  }

  // From here on a recovery is refused: the validator sees completed.
  state.status = 'completed';
  state.phase = 'completed';
  await short.completeTermination(tenantId);
  return state;
}
