/**
 * What the dead-letter service and its replay-all workflow (workflows/events/dead-letter-replay.workflow.ts)
 * exchange. Bundled into the workflow sandbox, so only types and pure definitions live here.
 */

/** What replay-all has done so far; carried from run to run across continue-as-new. */
export interface DeadLetterReplayTotals {
  /** Dead letters re-published (DLQReplayAllResponse.replayed of protos/platform/events/v1/events.proto). */
  replayed: number;
  /** Resolved dead letters the walk passed (DLQReplayAllResponse.skipped_already_resolved). */
  skippedAlreadyResolved: number;
}

/** The workflow's result, and a completed job's (GET /v1/jobs/{jobId}, kind events-dlq-replay). */
export type DeadLetterReplayResult = DeadLetterReplayTotals;

export interface DeadLetterReplayInput {
  tenantId: string;
  /** The job's local id (its public id is `events-dlq-replay.<replayId>`); also in the memo, where the job reader finds it. */
  replayId: string;
  /** EVENTS_DLQ_REPLAY_PER_SECOND (50): dead letters per page, and pages at most one a second. */
  perSecond: number;
  /** Pages per run before continue-as-new, so the history stays small however many dead letters there are. */
  pagesPerRun: number;
  /** Set by the first page (the database's time then): later dead letters are not part of this replay. */
  through?: string;
  /** The walk's cursor: the last id of the previous page; absent at the start. */
  after?: string;
  totals?: DeadLetterReplayTotals;
}

/** The workflow's signature, for starting it by name (services/events/dead-letters/replay.ts). */
export type DeadLetterReplayWorkflow = (input: DeadLetterReplayInput) => Promise<DeadLetterReplayResult>;

/** One page of replay-all: the activity's input. */
export interface ReplayPageInput {
  tenantId: string;
  replayId: string;
  /** The most dead letters to re-publish. */
  limit: number;
  after: string | null;
  through: string | null;
}

/** What one page did, and where the walk goes on. */
export interface ReplayPage extends DeadLetterReplayTotals {
  /** The last id of a full page (more may follow); null when the page was the last one. */
  next: string | null;
  /** The cutoff of the replay, as the first page fixed it. */
  through: string;
}

/**
 * The tenant's replay-all: one at a time per tenant (a second request joins the running one), a
 * business key that names the tenant (docs/decisions/temporal.md, Workflow ids).
 */
export function deadLetterReplayWorkflowId(tenantId: string): string {
  return `events.dlq-replay:${tenantId}`;
}
