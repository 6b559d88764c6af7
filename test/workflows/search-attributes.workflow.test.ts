import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { runWithRequestContext } from '../../common/context';
import { newId, newTraceId } from '../../common/ids';
import type { fileTrash } from '../../workflows/files/trash.workflow';
import type { sendEmail } from '../../workflows/notify/send-email.workflow';
import { bundleWorkflows } from '../../workers/temporal/worker';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';
import { searchAttributesProbe } from './fixtures/search-attributes-probe.workflows';

/**
 * The search attributes of common/temporal/search-attributes.ts under the time-skipping test server,
 * which createTimeSkippingEnv registers them in: what the platform's client starts carries its
 * BusinessKind and tenant, and both survive a continue-as-new and reach a child. The dev server's
 * visibility queries are test/integration/search-attributes.int.test.ts.
 */
describe('search attributes of platform workflows', () => {
  let env: TestWorkflowEnvironment;
  let probeBundle: WorkflowBundleWithSourceMap;

  beforeAll(async () => {
    [env, probeBundle] = await Promise.all([
      createTimeSkippingEnv(),
      bundleWorkflows(require.resolve('./fixtures/search-attributes-probe.workflows')),
    ]);
  });
  afterAll(() => env?.teardown());

  /** The attributes a started workflow was given, as [name, value] pairs; no worker needs to run it. */
  async function attributesOfStart(start: () => Promise<WorkflowHandle>): Promise<Array<[string, unknown]>> {
    const handle = await start();
    const { typedSearchAttributes } = await handle.describe();
    await handle.terminate();
    return typedSearchAttributes.getAll().map(({ key, value }): [string, unknown] => [key.name, value]).sort();
  }

  it('labels a start with its kind and the tenant its input names, with no request context', async () => {
    const tenantId = newId();
    const seen = await attributesOfStart(() => env.client.workflow.start<typeof fileTrash>('fileTrash', {
      taskQueue: uniqueTaskQueue('search-attributes'), workflowId: `test.search-attributes:${newId()}`,
      args: [{ tenantId, fileId: newId(), deletedAt: new Date().toISOString(), retentionMs: 60_000 }],
    }));
    expect(seen).toEqual([['BusinessKind', 'files.trash'], ['TenantId', tenantId]]);
  });

  it('takes the tenant of the request when the input names none', async () => {
    const tenantId = newId();
    const seen = await attributesOfStart(() => runWithRequestContext({ traceId: newTraceId(), tenantId }, () =>
      env.client.workflow.start<typeof sendEmail>('sendEmail', {
        taskQueue: uniqueTaskQueue('search-attributes'), workflowId: `test.search-attributes:${newId()}`,
        args: [{ message: { to: 'a@example.test', template: 'notice', data: { subject: 's', text: 't' } }, idempotencyKey: newId() }],
      })));
    expect(seen).toEqual([['BusinessKind', 'notify.send-email'], ['TenantId', tenantId]]);
  });

  it('keeps the tenant across a continue-as-new and gives it to a child whose input names none', async () => {
    const taskQueue = uniqueTaskQueue('search-attributes');
    const worker = await createTestWorker(env, { taskQueue, activities: {}, workflowBundle: probeBundle });
    const tenantId = newId();

    const report = await worker.runUntil(env.client.workflow.execute(searchAttributesProbe, {
      taskQueue, workflowId: `test.search-attributes:${newId()}`, args: [{ tenantId }],
    }));

    expect(report).toEqual({ continued: [['TenantId', tenantId]], child: [['TenantId', tenantId]] });
  });
});
