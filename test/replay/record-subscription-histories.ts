// Records the committed histories of the subscription workflow (test/replay/histories/subscriptionLifecycle/)
// on the time-skipping server, driving it with signals and updates as the gateway would; the
// generic `npm run record-history` only starts a workflow and waits for it to end, and a
// subscription never ends by itself. Run with the project's database env:
//   node -r ./test/helpers/app-swc-register.cjs test/replay/record-subscription-histories.ts
// Each recorded run ends in continue-as-new (or cancellation), a complete history for replay.
import { createBillingActivities } from '../../activities/billing/subscription.activities';
import { createLogger } from '../../common/logger';
import { newId } from '../../common/ids';
import { createDbPool } from '../../db/pool';
import { changePlanUpdate, providerEventSignal, subscriptionWorkflowId, tenantRecoveredSignal } from '../../workflows/billing/billing.messages';
import { subscriptionLifecycle } from '../../workflows/billing/subscription.workflow';
import { billingTestBundle, capturedMail, lifecycleSettings, seedBillingTenant } from '../helpers/billing';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';
import { runScript, writeHistories } from './recording';

const DAY = 86_400_000;

runScript(async () => {
  await migrateSharedDatabase();
  const owner = await createDbPool(ownerUrl(), { maxPoolSize: 4, name: 'record-subscription' });
  const app = await createDbPool(appUrl(), { maxPoolSize: 4, name: 'record-subscription-app' });
  const env = await createTimeSkippingEnv();
  const taskQueue = uniqueTaskQueue('record-billing');
  const worker = await createTestWorker(env, {
    taskQueue, workflowBundle: await billingTestBundle(),
    activities: { ...createBillingActivities({ appPool: app, logger: createLogger('record', 'silent') }), ...capturedMail().activities },
  });
  const event = (kind: 'payment_succeeded' | 'payment_failed' | 'canceled') => ({ provider: 'stripe' as const, eventId: `evt_${newId()}`, kind });
  const settle = () => env.sleep(1000);
  const runs: Array<[string, string, string]> = [];

  await worker.runUntil(async () => {
    const tenant = await seedBillingTenant(owner, { nowMs: await env.currentTimeMs(), extraMembers: 2 });
    const workflowId = subscriptionWorkflowId(tenant.tenantId);
    const handle = await env.client.workflow.start(subscriptionLifecycle, {
      taskQueue, workflowId, args: [{ tenantId: tenant.tenantId, settings: lifecycleSettings(taskQueue) }],
    });
    const currentRun = async () => (await handle.describe()).runId;
    // Run 1: the trial with its notice, ending unpaid (past_due), continued as new at the trial end.
    runs.push(['v1-trial-unpaid', workflowId, handle.firstExecutionRunId]);
    await env.sleep(14 * DAY + 60_000);
    // Run 2: dunning through suspension to termination (child started), recovery, payment.
    runs.push(['v1-dunning-terminated-recovered-paid', workflowId, await currentRun()]);
    await env.sleep(38 * DAY);
    await handle.signal(tenantRecoveredSignal);
    await settle();
    await handle.signal(providerEventSignal, event('payment_succeeded'));
    await settle();
    // Run 3: active; a downgrade to a plan the tenant's three members exceed; 30 days later (before or
    // at the cycle's end) past_due; then the provider cancels and the workflow ends.
    runs.push(['v1-active-downgrade-over-limits-canceled', workflowId, await currentRun()]);
    const { version } = await handle.query('subscriptionState').then((s) => (s as { subscription: { version: number } }).subscription);
    await handle.executeUpdate(changePlanUpdate, { args: [{ planId: 'free', version, kind: 'downgrade' }] });
    await env.sleep(30 * DAY + 60_000);
    await handle.signal(providerEventSignal, event('canceled'));
    await handle.result();
  });

  await writeHistories(env.client, 'subscriptionLifecycle', runs);
  await env.teardown();
  await owner.end();
  await app.end();
});
