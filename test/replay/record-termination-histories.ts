// Records the committed histories of the tenant termination (test/replay/histories/tenantTermination/)
// on the time-skipping server with the real activities (PostgreSQL, a bucket of its own), each for a
// tenant of its own: a termination that runs both deleting phases and completes (over 24 hours of
// skipped time), one recovered by the Platform Owner while its records phase waits out its rest (the
// subscription workflow, a stand-in, is told), and one recovered when the tenant's subscription
// workflow is gone (the signal fails and is logged). The generic `npm run record-history` cannot send
// the recovery. Run with the project's database env:
//   node -r ./test/helpers/app-swc-register.cjs test/replay/record-termination-histories.ts
// Payloads are recorded without the codec, as scripts/record-history.ts does: a committed history
// must replay on any machine, without this machine's payload key.
import { createTerminationActivities } from '../../activities/billing/termination.activities';
import { createLogger } from '../../common/logger';
import { subscriptionWorkflowId } from '../../workflows/billing/billing.messages';
import { recoverTenantUpdate, terminationWorkflowId } from '../../workflows/billing/termination.messages';
import { tenantTermination } from '../../workflows/billing/termination.workflow';
import { bundleWorkflows } from '../../workers/temporal/worker';
import { createTestBucket } from '../helpers/audit-export';
import { waitFor } from '../helpers/http';
import { uniqueTaskQueue } from '../helpers/temporal';
import { seedTerminationTenant } from '../helpers/termination';
import { createRecordingWorker, executeRecordedRun, recordHistories, writeHistories } from './recording';

recordHistories('record-termination', async ({ env, owner, app }) => {
  const bucket = await createTestBucket('record-termination');
  try {
    const taskQueue = uniqueTaskQueue('record-billing-termination');
    // The platform's tenantTermination beside a stand-in of the subscription workflow, which a recovery signals.
    const worker = await createRecordingWorker(
      env, taskQueue, createTerminationActivities({ appPool: app, objectStore: bucket, logger: createLogger('record', 'silent') }),
      await bundleWorkflows(require.resolve('../workflows/fixtures/billing-termination.workflows')),
    );
    const seed = async () => (await seedTerminationTenant(owner, bucket)).tenantId;

    /** A termination recovered once its records are deleted, while its timer waits out the rest of the phase. */
    async function recovered(name: string, withSubscription: boolean): Promise<[string, string]> {
      const tenantId = await seed();
      if (withSubscription) await env.client.workflow.start('subscriptionStub', { taskQueue, workflowId: subscriptionWorkflowId(tenantId) });
      const handle = await env.client.workflow.start(tenantTermination, { taskQueue, workflowId: terminationWorkflowId(tenantId), args: [{ tenantId }] });
      // Time does not skip while no client waits for a result, so the timer is still running when the update comes.
      await waitFor('the records phase to wait out its rest', async () => (await handle.fetchHistory()).events!.some((event) => event.timerStartedEventAttributes));
      await handle.executeUpdate(recoverTenantUpdate);
      console.log(name, JSON.stringify(await handle.result()));
      return [name, handle.workflowId];
    }

    const recorded = await worker.runUntil(async () => {
      const tenantId = await seed();
      const completed = await executeRecordedRun(env.client, 'v1-completed', tenantTermination, {
        taskQueue, workflowId: terminationWorkflowId(tenantId), args: [{ tenantId }],
      });
      return [completed.run, await recovered('v1-recovered', true), await recovered('v1-recovered-subscription-gone', false)];
    });

    await writeHistories(env.client, 'tenantTermination', recorded);
  } finally {
    await bucket.remove();
  }
});
