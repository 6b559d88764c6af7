import { setTimeout as sleep } from 'node:timers/promises';
import {
  WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ApplicationFailure, type SearchAttributePair } from '@temporalio/common';
import type { Config } from '../../common/config';
import type { PlanLimitReader } from './plan-limits';
import { problems } from '../../common/problems';
import { refusalProblem } from './refusals';
import { idempotentRequestOf } from './flow-operation';
import { requestHash, storedAnswerFor } from '../idempotency/idempotent';
import type { DatabasePool } from '../../db/pool';
import { selectTransaction, type TransactionRow } from '../../db/queries/money/transactions.queries';
import { withTenant } from '../../db/tenant';
import type { moneyHold } from '../../workflows/money/hold.workflow';
import {
  holdPlaced, settleHold, transferDone, type IdempotencyUse, type Refused, type TransactionView,
} from '../../workflows/money/money.messages';
import type { moneyTransfer } from '../../workflows/money/transfer.workflow';
import type { TemporalHandle } from '../../common/temporal/client';
import { WalletId } from '../../common/temporal/search-attributes';
import type { LeaveAdmission, MoneyAdmission } from './admission';
import { answerByDeadline, type FlowAnswer, type JobMark } from './flow-deadline';
import { MONEY_FLOW_SCOPES, holdJob, holdWorkflowId, settleJob, transferJob } from './jobs';

export interface MoneyFlowDeps {
  config: Pick<Readonly<Config>, 'moneyFlows' | 'maintenance' | 'api'>;
  /** The application pool (platform_app, under withTenant): hold lookups and stored answers. */
  db: DatabasePool;
  limits: PlanLimitReader;
  temporal: () => TemporalHandle | undefined;
  /** The tenant's in-flight bound, counted in Redis across gateways (429 past it). */
  admission: MoneyAdmission;
}

export interface HoldRequest {
  walletId: string;
  amount: number;
  currency: string;
  reason: string;
  ttlSeconds: number;
}

export interface TransferRequest {
  fromWalletId: string;
  toWalletId: string;
  amount: number;
  currency: string;
  reason: string;
}

/**
 * The gateway's side of holds and transfers (workflows/money). Each request is one round trip to
 * Temporal: update-with-start creates the workflow (id `money.<kind>:<tenantId>:<Idempotency-Key>`)
 * and its update answers the result as soon as the workflow's local activity committed it, with no
 * polling. A retried request finds the running workflow (conflict policy USE_EXISTING) or, once it
 * has finished, the stored answer. A refused request stores nothing and its workflow completes with
 * the refusal as its result (a 4xx is no fault): a retry with its key then starts a new run, which
 * evaluates the request again (withStart); a run that failed (a real fault) may be replaced at once
 * (reuse policy ALLOW_DUPLICATE_FAILED_ONLY).
 *
 * Overload (issue 19): every request first takes one of its tenant's in-flight slots (admission.ts)
 * and is answered within the gateway's deadline (flow-deadline.ts): its transaction, or the job of
 * its still-running workflow. Each workflow carries its tenant in its memo, so its job can be read.
 */
export class MoneyFlows {
  /** A hold's TTL when the request names none (MONEY_HOLD_TTL_HOURS). */
  readonly defaultTtlSeconds: number;

  constructor(private readonly deps: MoneyFlowDeps) {
    this.defaultTtlSeconds = deps.config.moneyFlows.holdTtlHours * 3600;
  }

  placeHold(tenantId: string, request: HoldRequest, key: string): Promise<FlowAnswer> {
    const idempotency = this.use('hold', key, request);
    return this.admitted(tenantId, idempotency, async (mark) => {
      const limits = await this.deps.limits.limitsFor(tenantId);
      const args = [{ tenantId, ...request, limits, maxOpenHolds: this.deps.config.moneyFlows.maxHoldsPerWallet, idempotency }] as const;
      mark.job = holdJob(tenantId, key);
      return this.withStart(tenantId, [request.walletId], idempotency, mark.job.workflowId, async (client, options) =>
        client.workflow.executeUpdateWithStart(holdPlaced, {
          args: [{ requestHash: idempotency.requestHash }],
          startWorkflowOperation: new WithStartWorkflowOperation<typeof moneyHold>('moneyHold', { ...options, args }),
        }));
    });
  }

  async transfer(tenantId: string, request: TransferRequest, key: string): Promise<FlowAnswer> {
    if (request.fromWalletId === request.toWalletId) {
      throw problems.validation([{ field: 'toWalletId', code: 'INVALID_VALUE', message: 'must differ from fromWalletId' }]);
    }
    const idempotency = this.use('transfer', key, request);
    return this.admitted(tenantId, idempotency, async (mark) => {
      const limits = await this.deps.limits.limitsFor(tenantId);
      const args = [{ tenantId, ...request, limits, idempotency }] as const;
      mark.job = transferJob(tenantId, key);
      // Found by either wallet (WalletId is a keyword list): the debited one and the credited one.
      return this.withStart(tenantId, [request.fromWalletId, request.toWalletId], idempotency, mark.job.workflowId, async (client, options) =>
        client.workflow.executeUpdateWithStart(transferDone, {
          args: [{ requestHash: idempotency.requestHash }],
          startWorkflowOperation: new WithStartWorkflowOperation<typeof moneyTransfer>('moneyTransfer', { ...options, args }),
        }));
    });
  }

  /**
   * Confirm or cancel through the hold's workflow (a Temporal Update answers the resulting
   * transaction). The hold row names the workflow (its idempotency key). A stored answer for this
   * key is replayed without asking Temporal; a finished workflow is answered from the hold's row.
   */
  settle(tenantId: string, action: 'confirm' | 'cancel', holdId: string, key: string, walletId?: string): Promise<FlowAnswer> {
    const idempotency = this.use(action, key, { holdId, action });
    return this.admitted(tenantId, idempotency, async (mark) => {
      const { hold, stored } = await withTenant(this.deps.db, tenantId, async (tx) => ({
        hold: await selectTransaction(tx, tenantId, holdId),
        stored: await storedAnswerFor(tx, idempotentRequestOf(tenantId, idempotency)),
      }));
      if (!hold || hold.type !== 'hold' || (walletId !== undefined && hold.walletId !== walletId)) throw problems.notFound('hold');
      if (stored) return stored.body as TransactionView;
      const client = await this.client();
      const holdKey = hold.idempotencyKey ?? '';
      mark.job = settleJob(tenantId, action, holdKey, key);
      try {
        return await client.workflow.getHandle(holdWorkflowId(tenantId, holdKey)).executeUpdate(settleHold, { args: [{ action, idempotency }] });
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return this.settledWithoutWorkflow(tenantId, hold, idempotency);
        throw refusalOf(error);
      }
    });
  }

  /**
   * The work of one request, once its tenant has a slot for it and within the gateway's deadline. A
   * request refused a slot whose key already has its answer stored (a client replaying a finished
   * operation) gets that answer: it would start nothing, so the bound has nothing to protect.
   */
  private admitted(tenantId: string, idempotency: IdempotencyUse, work: (mark: JobMark) => Promise<TransactionView>): Promise<FlowAnswer> {
    const deadline = { deadlineMs: this.deps.config.api.downstreamTimeoutMs, temporal: this.deps.temporal };
    return answerByDeadline(deadline, tenantId, async (mark) => {
      let leave: LeaveAdmission;
      try {
        leave = await this.deps.admission.enter(tenantId);
      } catch (refusal) {
        const stored = await withTenant(this.deps.db, tenantId, (tx) => storedAnswerFor(tx, idempotentRequestOf(tenantId, idempotency)));
        if (stored) return stored.body as TransactionView;
        throw refusal;
      }
      try {
        return await work(mark);
      } finally {
        leave();
      }
    });
  }

  /** The hold's workflow has finished: the hold's row says why this settlement cannot happen. */
  private async settledWithoutWorkflow(tenantId: string, hold: TransactionRow, idempotency: IdempotencyUse): Promise<TransactionView> {
    const { now, stored } = await withTenant(this.deps.db, tenantId, async (tx) => ({
      now: await selectTransaction(tx, tenantId, hold.id),
      stored: await storedAnswerFor(tx, idempotentRequestOf(tenantId, idempotency)),
    }));
    if (stored) return stored.body as TransactionView;
    if (now?.expiredAt || (now?.expiresAt && Date.parse(now.expiresAt) <= Date.now())) throw problems.holdExpired(hold.id);
    if (now && now.status !== 'held') throw problems.holdSettled(hold.id, now.status);
    throw problems.unavailable('The hold\'s workflow is not running; the hold is released at its expiry');
  }

  private async withStart(
    tenantId: string,
    walletIds: string[],
    idempotency: IdempotencyUse,
    workflowId: string,
    run: (client: TemporalHandle['client'], options: StartOptions) => Promise<TransactionView>,
  ): Promise<TransactionView> {
    const client = await this.client();
    try {
      return await run(client, this.startOptions(tenantId, walletIds, workflowId, 'ALLOW_DUPLICATE_FAILED_ONLY'));
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw refusalOf(error);
    }
    // The key's workflow ran to its end (a settled hold, a finished transfer): answer what it stored.
    const stored = await withTenant(this.deps.db, tenantId, (tx) => storedAnswerFor(tx, idempotentRequestOf(tenantId, idempotency)));
    if (stored) return stored.body as TransactionView;
    // Nothing stored: a run that refused the request (a refusal stores nothing) leaves the key free for a
    // new run that evaluates it again; a run that answered, whose stored answer expired, does not.
    if (!await mayRunAgain(client, workflowId)) throw problems.conflict('This Idempotency-Key was already used, and its answer is no longer kept');
    try {
      return await run(client, this.startOptions(tenantId, walletIds, workflowId, 'ALLOW_DUPLICATE'));
    } catch (error) {
      throw refusalOf(error);
    }
  }

  private startOptions(
    tenantId: string, walletIds: string[], workflowId: string, workflowIdReusePolicy: StartOptions['workflowIdReusePolicy'],
  ): StartOptions {
    return {
      workflowId, taskQueue: this.deps.config.moneyFlows.taskQueue, workflowIdConflictPolicy: 'USE_EXISTING', workflowIdReusePolicy,
      // The job of the request, if its deadline passes, is read from this workflow in its tenant (read-job.ts).
      memo: { tenantId },
      // The wallets it acts on; the client's interceptor adds TenantId and BusinessKind (common/temporal/search-attributes.ts).
      typedSearchAttributes: [{ key: WalletId, value: walletIds }],
    };
  }

  private use(kind: keyof typeof MONEY_FLOW_SCOPES, key: string, request: object): IdempotencyUse {
    return {
      scope: MONEY_FLOW_SCOPES[kind], key, requestHash: requestHash(request), ttlHours: this.deps.config.maintenance.idempotencyKeyTtlHours,
    };
  }

  /** The gateway connects to Temporal in the background; an early request waits up to the downstream deadline. */
  private async client(): Promise<TemporalHandle['client']> {
    const deadline = Date.now() + this.deps.config.api.downstreamTimeoutMs;
    for (let handle = this.deps.temporal(); ; handle = this.deps.temporal()) {
      if (handle) return handle.client;
      if (Date.now() >= deadline) throw problems.unavailable('Money operations are not available yet; try again shortly');
      await sleep(50);
    }
  }
}

/** How a money workflow is started: under its key's id, attached to a run of it still running. */
interface StartOptions {
  workflowId: string;
  taskQueue: string;
  workflowIdConflictPolicy: 'USE_EXISTING';
  workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY' | 'ALLOW_DUPLICATE';
  memo: { tenantId: string };
  typedSearchAttributes: SearchAttributePair[];
}

/**
 * Whether a key whose last run stored no answer may start a new one: that run completed with a
 * refusal (workflows/money: the result `{ ok: false }`), or a concurrent retry of the same refused
 * request has just started a new run (USE_EXISTING attaches to it). A run that completed with its
 * answer, whose stored copy has expired, may not (409: the key was used).
 */
async function mayRunAgain(client: TemporalHandle['client'], workflowId: string): Promise<boolean> {
  const { runId, status } = await client.workflow.getHandle(workflowId).describe();
  if (status.name === 'RUNNING') return true;
  if (status.name !== 'COMPLETED') return false;
  const result: unknown = await client.workflow.getHandle(workflowId, runId).result();
  return (result as Partial<Refused> | null)?.ok === false;
}

/**
 * A refused update as the problem the activity refused with: the ApplicationFailure's type is the
 * problem suffix and its first detail the problem's extensions. Anything else is passed on.
 */
function refusalOf(error: unknown): unknown {
  if (!(error instanceof WorkflowUpdateFailedError)) return error;
  for (let cause: unknown = error.cause; cause instanceof Error; cause = cause.cause) {
    const problem = cause instanceof ApplicationFailure
      ? refusalProblem(cause.type, cause.message, (cause.details?.[0] ?? {}) as Record<string, unknown>) : undefined;
    if (problem) return problem;
  }
  return error;
}
