// Records the committed histories of replay-all (test/replay/histories/deadLetterReplay/) on the
// time-skipping server with the real activity (PostgreSQL on the application role, Kafka): a replay
// that continues as new (its first and its last run), one with nothing pending, and one whose page
// failed once and was retried. The generic `npm run record-history` cannot seed the dead letters nor
// fail a send. Run with the project's database env:
//   node -r ./test/helpers/app-swc-register.cjs test/replay/record-dead-letter-replay-histories.ts
// Payloads are recorded without the codec, as scripts/record-history.ts does: a committed history
// must replay on any machine, without this machine's payload key.
import { createDeadLetterActivities, type WorkerProducer } from '../../activities/events/dead-letters.activities';
import { newId } from '../../common/ids';
import { ReconnectingProducer } from '../../common/kafka';
import { createDbPool } from '../../db/pool';
import { deadLetterReplayWorkflowId, type DeadLetterReplayInput } from '../../workflows/events/dead-letters.messages';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';
import { seedDeadLetter } from '../helpers/dead-letters';
import { ensureCatalogueTopics, testKafka } from '../helpers/kafka';
import { uniqueTaskQueue } from '../helpers/temporal';
import { createPlainTimeSkippingEnv, createRecordingWorker, runScript, writeHistories } from './recording';

runScript(async () => {
  await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics()]);
  const owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'record-dlq-replay' });
  const app = await createDbPool(appUrl(), { maxPoolSize: 2, name: 'record-dlq-replay-app' });
  const producer = new ReconnectingProducer(testKafka());
  const env = await createPlainTimeSkippingEnv();
  const runs: Array<[name: string, workflowId: string, runId?: string]> = [];
  try {
    /** Seeds a tenant's dead letters, replays them with `input`, and returns the chain's first and last run. */
    async function record(seed: { pending: number; resolved: number }, input: Partial<DeadLetterReplayInput>, workerProducer: WorkerProducer = producer) {
      const tenantId = newId();
      for (let index = 0; index < seed.pending; index += 1) await seedDeadLetter(owner, tenantId);
      for (let index = 0; index < seed.resolved; index += 1) await seedDeadLetter(owner, tenantId, { status: 'resolved' });
      const taskQueue = uniqueTaskQueue('record-dlq-replay');
      const worker = await createRecordingWorker(env, taskQueue, createDeadLetterActivities({ appPool: app, producer: workerProducer }));
      return worker.runUntil(async () => {
        const handle = await env.client.workflow.start('deadLetterReplay', {
          taskQueue, workflowId: deadLetterReplayWorkflowId(tenantId), memo: { tenantId },
          args: [{ tenantId, replayId: newId(), perSecond: 2, pagesPerRun: 100, ...input } satisfies DeadLetterReplayInput],
        });
        await handle.result();
        return { workflowId: handle.workflowId, first: handle.firstExecutionRunId, last: (await handle.describe()).runId };
      });
    }

    // Pages of two, one page per run: 2 + 2 + 1, three runs (the first and the last recorded).
    const continued = await record({ pending: 5, resolved: 1 }, { pagesPerRun: 1 });
    runs.push(['v1-continued-as-new', continued.workflowId, continued.first], ['v1-last-run', continued.workflowId, continued.last]);
    const nothing = await record({ pending: 0, resolved: 2 }, {});
    runs.push(['v1-nothing-pending', nothing.workflowId, nothing.first]);
    let sends = 0;
    const flaky: WorkerProducer = {
      async send(records) {
        sends += 1;
        if (sends === 2) throw new Error('broker unreachable');
        await producer.send(records);
      },
      reset: () => producer.reset(),
    };
    const retried = await record({ pending: 3, resolved: 0 }, {}, flaky);
    runs.push(['v1-page-retried', retried.workflowId, retried.first]);

    await writeHistories(env.client, 'deadLetterReplay', runs);
  } finally {
    await env.teardown();
    await Promise.all([owner.end(), app.end(), producer.reset()]);
  }
});
