import { problems, type Problem } from '../../common/problems';
import type { DatabasePool } from '../../db/pool';
import { selectStoredAnswer } from '../../db/queries/idempotency/keys.queries';
import { selectTransaction } from '../../db/queries/money/transactions.queries';
import { withTenant } from '../../db/tenant';
import type { HoldResult, Refused, TransactionView, TransferResult } from '../../workflows/money/money.messages';
import { jobIdOf, type JobExecution, type JobKind, type JobOutcome } from '../../common/jobs';
import { operationView } from './operation-view';
import { refusalProblem } from './refusals';

/**
 * The jobs of money requests whose deadline passed while their workflow ran (issue 19; the one
 * job handle of docs/decisions/jobs.md): the 202 names `<kind>.<local id>` and GET /v1/jobs/{jobId}
 * follows it. No row is written for a job: the Idempotency-Key names the workflow and, once the
 * work committed, the answer it stored, which is the job's result (the final transaction, exactly
 * what the same key replays).
 */
export const MONEY_JOB_KINDS = { transfer: 'money-transfer', hold: 'money-hold', confirm: 'money-confirm', cancel: 'money-cancel' } as const;

/** Holds, transfers, confirms and cancels need money.write; following their jobs needs the same. */
export const MONEY_JOB_PERMISSION = 'money.write';

/** Idempotency scopes: one per operation, so route sets A and B of one operation share their keys. */
export const MONEY_FLOW_SCOPES = {
  hold: 'POST /wallets/:id/hold',
  confirm: 'POST /holds/:id/confirm',
  cancel: 'POST /holds/:id/cancel',
  transfer: 'POST /transfers',
} as const;

/** A money request's job: its public id and the workflow that runs it. */
export interface MoneyJob {
  jobId: string;
  workflowId: string;
}

/** Idempotency-Keys are UUID v4 or v7 (api/http/headers.ts): a job's local id is one, or two joined by `_`. */
const KEY = '[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[47][0-9A-Fa-f]{3}-[89ABab][0-9A-Fa-f]{3}-[0-9A-Fa-f]{12}';
const ONE_KEY = new RegExp(`^${KEY}$`);
const TWO_KEYS = new RegExp(`^${KEY}_${KEY}$`);

export const holdWorkflowId = (tenantId: string, key: string): string => `money.hold:${tenantId}:${key}`;
export const transferWorkflowId = (tenantId: string, key: string): string => `money.transfer:${tenantId}:${key}`;

export function transferJob(tenantId: string, key: string): MoneyJob {
  return { jobId: jobIdOf(MONEY_JOB_KINDS.transfer, key), workflowId: transferWorkflowId(tenantId, key) };
}

export function holdJob(tenantId: string, key: string): MoneyJob {
  return { jobId: jobIdOf(MONEY_JOB_KINDS.hold, key), workflowId: holdWorkflowId(tenantId, key) };
}

/**
 * A confirm or cancel runs as an update of its hold's workflow, so its local id names both keys:
 * `<hold's key>_<this request's key>`. A hold placed with a key of the old free form (before
 * issue 15) has no job id; its settlement answers 504 at the deadline as before.
 */
export function settleJob(tenantId: string, action: 'confirm' | 'cancel', holdKey: string, key: string): MoneyJob | undefined {
  if (!ONE_KEY.test(holdKey)) return undefined;
  return { jobId: jobIdOf(MONEY_JOB_KINDS[action], `${holdKey}_${key}`), workflowId: holdWorkflowId(tenantId, holdKey) };
}

export interface MoneyJobDeps {
  /** The application pool (platform_app, under withTenant): the answers stored under the keys. */
  db: DatabasePool;
}

/** The money kinds of GET /v1/jobs/{jobId} (services/jobs/registry.ts). */
export function moneyJobKinds(deps: MoneyJobDeps): JobKind[] {
  const stored = (tenantId: string, scope: string, key: string) => withTenant(deps.db, tenantId, async (tx) =>
    (await selectStoredAnswer(tx, { tenantId, scope, key }))?.response as TransactionView | undefined);
  const kind = (name: string, title: string, localId: RegExp, workflowId: JobKind['workflowId'], outcome: JobKind['outcome']): JobKind =>
    ({ name, title, permission: MONEY_JOB_PERMISSION, localId, workflowId, outcome });

  return [
    kind(MONEY_JOB_KINDS.transfer, 'transfer', ONE_KEY, transferWorkflowId, async (execution) => {
      const answer = await stored(execution.tenantId, MONEY_FLOW_SCOPES.transfer, execution.localId);
      if (answer) return done(answer);
      if (execution.status !== 'completed') return undefined;
      const result = await execution.handle.result() as TransferResult;
      return result.ok ? done(result.transaction) : refused(result, 'transfer');
    }),
    // A hold's workflow runs on until the hold is settled or expires; its job is done once it is placed.
    kind(MONEY_JOB_KINDS.hold, 'hold', ONE_KEY, holdWorkflowId, async (execution) => {
      const answer = await stored(execution.tenantId, MONEY_FLOW_SCOPES.hold, execution.localId);
      if (answer) return done(answer);
      if (execution.status !== 'completed') return undefined;
      const result = await execution.handle.result() as HoldResult;
      if (!result.ok) return refused(result, 'hold');
      // Placed, and its stored answer has expired since (IDEMPOTENCY_KEY_TTL_HOURS): the hold's row.
      const row = await withTenant(deps.db, execution.tenantId, (tx) => selectTransaction(tx, execution.tenantId, result.holdTransactionId));
      return row ? done(operationView(row)) : undefined;
    }),
    ...(['confirm', 'cancel'] as const).map((action) => kind(
      MONEY_JOB_KINDS[action], action, TWO_KEYS,
      (tenantId, localId) => holdWorkflowId(tenantId, localId.split('_')[0]),
      (execution) => settlementOutcome(execution, action, stored),
    )),
  ];
}

/**
 * A settlement commits its answer before the hold's workflow can end (the workflow ends once the
 * hold is settled or expired, after its handlers finished), and the job's workflow was described
 * before this reads the answer. So no answer under the key and a completed workflow means the hold
 * ended otherwise: settled by another request or expired, which is what this one was refused with.
 */
async function settlementOutcome(
  execution: JobExecution,
  action: 'confirm' | 'cancel',
  stored: (tenantId: string, scope: string, key: string) => Promise<TransactionView | undefined>,
): Promise<JobOutcome | undefined> {
  const answer = await stored(execution.tenantId, MONEY_FLOW_SCOPES[action], execution.localId.split('_')[1]);
  if (answer) return done(answer);
  if (execution.status !== 'completed') return undefined;
  const result = await execution.handle.result() as HoldResult;
  if (!result.ok) return refused(result, action);
  const error: Problem = result.outcome === 'expired'
    ? problems.holdExpired(result.holdTransactionId) : problems.holdSettled(result.holdTransactionId, result.outcome);
  return { completedAt: null, result: undefined, error };
}

/** The final transaction; the work was done when it was written. */
function done(transaction: TransactionView): JobOutcome {
  return { completedAt: transaction.createdAt, result: transaction };
}

function refused({ problem }: Refused, what: string): JobOutcome {
  const error = refusalProblem(problem.type, problem.detail, problem.extensions) ?? problems.jobFailed(what);
  return { completedAt: null, result: undefined, error };
}
