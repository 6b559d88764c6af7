import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { runWithRequestContext } from '../../common/context';
import { newId, newTraceId } from '../../common/ids';
import { activityContext } from '../../common/temporal/activity-context';
import { bundleWorkflows } from '../../workers/temporal/worker';
import { connectDevServer, createTestWorker, uniqueTaskQueue, type DevServer } from '../helpers/temporal';
import { messageContextProbe, probeSignal, probeUpdate } from '../workflows/fixtures/context-probe.workflows';

/**
 * Against the real Temporal server: a signal or an update carries its sender's trace and actor to
 * the activities its handler runs, while the tenant stays the workflow's own. (The time-skipping test
 * server drops signal headers, so this half of context propagation is proven here.)
 */
describe('request context of signals and updates', () => {
  let server: DevServer;
  let probeBundle: WorkflowBundleWithSourceMap;

  beforeAll(async () => {
    [server, probeBundle] = await Promise.all([
      connectDevServer(),
      bundleWorkflows(require.resolve('../workflows/fixtures/context-probe.workflows')),
    ]);
  });
  afterAll(() => server?.close());

  it('reaches the handler\'s activities with the sender\'s trace and the workflow\'s tenant', async () => {
    const taskQueue = uniqueTaskQueue('context');
    const worker = await createTestWorker(server, {
      taskQueue, workflowBundle: probeBundle, activities: { seenContext: async () => activityContext() },
    });
    const tenantId = newId();
    const starter = { tenantId, traceId: newTraceId(), actorId: newId() };
    const updater = { tenantId, traceId: newTraceId(), actorId: newId() };
    // A sender naming another tenant cannot move the workflow: the gateway never lets it get this
    // far (workflow ids carry the tenant), and if it did, the workflow's own tenant still holds.
    const signaller = { tenantId: newId(), traceId: newTraceId(), actorId: newId(), impersonatorId: newId() };

    const { inUpdate, inSignal } = await worker.runUntil(async () => {
      const handle = await runWithRequestContext(starter, () =>
        server.client.workflow.start(messageContextProbe, { taskQueue, workflowId: `test.context-probe:${tenantId}` }));
      const seenInUpdate = await runWithRequestContext(updater, () => handle.executeUpdate(probeUpdate));
      await runWithRequestContext(signaller, () => handle.signal(probeSignal));
      return { inUpdate: seenInUpdate, inSignal: await handle.result() };
    });

    expect(inUpdate).toEqual(updater);
    expect(inSignal).toEqual({ ...signaller, tenantId });
  });
});
