import type { WorkflowHandle } from '@temporalio/client';
import { newId } from '../../../common/ids';
import { problems } from '../../../common/problems';
import type { DatabasePool } from '../../../db/pool';
import { countResolvedInReplay, lockReplayPage, transactionTime } from '../../../db/queries/events/dead-letters.queries';
import { withTenant } from '../../../db/tenant';
import {
  deadLetterReplayWorkflowId, type DeadLetterReplayResult, type DeadLetterReplayWorkflow, type ReplayPage, type ReplayPageInput,
} from '../../../workflows/events/dead-letters.messages';
import type { AuditTrail } from '../audit-trail';
import { deadLetterAudit, replayRequestAudit, type DeadLetterActor } from './audit';
import type { DeadLetterDeps, RedeliveryProducer } from './deps';
import { replayJobIdOf } from './replay-job';
import { redeliver } from './retry';

/**
 * Replay-all (docs/reference/events.md#rule-18: DLQReplayAll; REST POST /integrations/dlq/replay): the workflow
 * `events.dlq-replay:<tenantId>` (workflows/events/dead-letter-replay.workflow.ts) walks the tenant's
 * dead letters a page at a time; each page is replayDeadLetterPage, run by its activity.
 */

/** What a page of replay-all works with, in the worker. */
export interface ReplayPageDeps {
  /** The application pool: the page runs in its tenant's transaction. */
  appPool: DatabasePool;
  producer: RedeliveryProducer;
  /** Audit's writer, passed in (services/events/audit-trail.ts). */
  audit: AuditTrail;
}

/**
 * One page: up to `limit` pending, non-quarantined dead letters after the cursor (oldest first, none
 * dead-lettered after the replay's cutoff) are re-published for their groups in one batch, marked
 * retrying, and audited events.dlq.replayed, in one transaction holding their locks; the resolved
 * ones the page passes are counted. A page whose transaction fails after the send is re-sent by the
 * activity's retry (consumers de-duplicate by event id). The first page fixes the cutoff.
 */
export async function replayDeadLetterPage(deps: ReplayPageDeps, input: ReplayPageInput, actor: Omit<DeadLetterActor, 'tenantId'>): Promise<ReplayPage> {
  const { tenantId } = input;
  return withTenant(deps.appPool, tenantId, async (tx) => {
    const window = { after: input.after, through: input.through ?? await transactionTime(tx) };
    const rows = await lockReplayPage(tx, tenantId, window, input.limit);
    // A full page may have more after it; a short one was the last.
    const next = rows.length === input.limit ? rows[rows.length - 1].id : null;
    const skippedAlreadyResolved = await countResolvedInReplay(tx, tenantId, window, next);
    const jobId = replayJobIdOf(input.replayId);
    await redeliver(tx, deps, rows, (row) => deadLetterAudit('events.dlq.replayed', row, { tenantId, ...actor }, { jobId }));
    return { replayed: rows.length, skippedAlreadyResolved, next, through: window.through };
  });
}

/** A replay-all that was asked for: its job, its workflow, and whether it was running already. */
export interface StartedReplay {
  jobId: string;
  joined: boolean;
  handle: WorkflowHandle<DeadLetterReplayWorkflow>;
}

/**
 * Starts the tenant's replay-all, or joins the one that runs (conflict policy USE_EXISTING: one
 * replay per tenant at a time, and a repeated request does not start a second); once it has ended
 * a request starts a new one. The replay's id is in the memo (the job reader checks it), so a joined
 * request answers the running replay's job. Audited events.dlq.replay_requested either way.
 */
export async function startDeadLetterReplay(deps: DeadLetterDeps, actor: DeadLetterActor): Promise<StartedReplay> {
  const temporal = deps.temporal();
  if (!temporal) throw problems.unavailable('The workflow service is not connected; try again shortly');
  const { tenantId } = actor;
  const replayId = newId();
  const { replayPerSecond, replayPagesPerRun, taskQueue } = deps.settings;
  let handle: WorkflowHandle<DeadLetterReplayWorkflow>;
  let running: unknown;
  try {
    // By name: the workflow's own type would close an import cycle through the activities, which import this file.
    handle = await temporal.client.workflow.start<DeadLetterReplayWorkflow>('deadLetterReplay', {
      taskQueue,
      workflowId: deadLetterReplayWorkflowId(tenantId),
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      args: [{ tenantId, replayId, perSecond: replayPerSecond, pagesPerRun: replayPagesPerRun }],
      memo: { tenantId, replayId },
      staticSummary: `Replays the pending dead letters of tenant ${tenantId}, ${replayPerSecond} a second`,
    });
    running = (await handle.describe()).memo?.replayId;
  } catch (error) {
    throw problems.unavailable('The replay could not be started; try again', error);
  }
  const localId = typeof running === 'string' ? running : replayId;
  const jobId = replayJobIdOf(localId);
  const joined = localId !== replayId;
  await withTenant(deps.db, tenantId, (tx) => deps.audit.record(tx, replayRequestAudit(actor, jobId, joined)));
  return { jobId, joined, handle };
}

/** DLQReplayAll: starts or joins the tenant's replay-all and waits for its totals (the caller's deadline bounds the wait). */
export async function replayAllDeadLetters(deps: DeadLetterDeps, actor: DeadLetterActor): Promise<DeadLetterReplayResult> {
  const { handle } = await startDeadLetterReplay(deps, actor);
  return handle.result();
}
