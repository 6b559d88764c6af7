import { Writable } from 'node:stream';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import pino from 'pino';
import { runWithRequestContext } from '../../common/context';
import { newId, newTraceId } from '../../common/ids';
import { activityContext, contextBoundLogger } from '../../common/temporal/activity-context';
import { bundleWorkflows } from '../../workers/temporal/worker';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';
import { childContextProbe, contextProbe, type ProbeActivities } from './fixtures/context-probe.workflows';

/**
 * The gateway's request context (tenant, trace, actor) reaches every activity a workflow runs: through
 * the client interceptor into the start headers, the workflow interceptors onto each activity and child
 * workflow, and the activity interceptor into activityContext() and the activity logger. Signals and
 * updates are covered against the real server (test/integration/temporal-context.int.test.ts): the
 * time-skipping test server of this Temporal release drops signal headers (sdk-java issue 2586).
 */
describe('request context propagation through Temporal', () => {
  let env: TestWorkflowEnvironment;
  let probeBundle: WorkflowBundleWithSourceMap;
  const logLines: Record<string, unknown>[] = [];
  const logger = contextBoundLogger(pino(new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  })));
  const activities: ProbeActivities = {
    async seenContext() {
      logger.info('probe activity ran');
      return activityContext();
    },
  };

  beforeAll(async () => {
    [env, probeBundle] = await Promise.all([
      createTimeSkippingEnv(),
      bundleWorkflows(require.resolve('./fixtures/context-probe.workflows')),
    ]);
  });
  afterAll(() => env?.teardown());

  it('carries the starter\'s context to its activities, its children\'s activities and their log lines', async () => {
    const taskQueue = uniqueTaskQueue('context');
    const worker = await createTestWorker(env, { taskQueue, activities, workflowBundle: probeBundle });
    const tenantId = newId();
    const request = { tenantId, traceId: newTraceId(), actorId: newId(), impersonatorId: newId() };

    const { report, memo } = await worker.runUntil(async () => {
      const handle = await runWithRequestContext(request, () =>
        env.client.workflow.start(contextProbe, { taskQueue, workflowId: `test.context-probe:${tenantId}` }));
      return { report: await handle.result(), memo: (await handle.describe()).memo };
    });

    expect(report).toEqual({ onStart: request, inChild: request });
    expect(memo).toEqual({ tenantId });
    const lines = logLines.filter((line) => line.traceId === request.traceId);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ tenantId, actorId: request.actorId, msg: 'probe activity ran' });
  });

  it('gives work started outside a request a trace id made from its run id', async () => {
    const taskQueue = uniqueTaskQueue('context');
    const worker = await createTestWorker(env, { taskQueue, activities, workflowBundle: probeBundle });

    const { runId, seen } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(childContextProbe, { taskQueue, workflowId: `test.context-probe:${newId()}` });
      return { runId: handle.firstExecutionRunId, seen: await handle.result() };
    });

    expect(seen).toEqual({ traceId: runId.replaceAll('-', '') });
  });
});
