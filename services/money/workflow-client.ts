import { setTimeout as sleep } from 'node:timers/promises';
import {
  WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Config } from '../../common/config';
import type { PlanLimitReader } from './plan-limits';
import { Problem, problems, type ProblemType } from '../../common/problems';
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

/** Idempotency scopes: one per operation, so route sets A and B of one operation share their keys. */
export const MONEY_FLOW_SCOPES = {
  hold: 'POST /wallets/:id/hold',
  confirm: 'POST /holds/:id/confirm',
  cancel: 'POST /holds/:id/cancel',
  transfer: 'POST /transfers',
} as const;

export interface MoneyFlowDeps {
  config: Pick<Readonly<Config>, 'moneyFlows' | 'maintenance' | 'api'>;
  /** The application pool (platform_app, under withTenant): hold lookups and stored answers. */
  db: DatabasePool;
  limits: PlanLimitReader;
  temporal: () => TemporalHandle | undefined;
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

/** The refusals an activity or workflow may answer with (their ApplicationFailure type is the suffix). */
const REFUSALS = new Set<string>([
  'validation-error', 'not-found', 'insufficient-funds', 'invalid-amount', 'hold-limit-exceeded', 'hold-expired',
  'hold-settled', 'idempotency-conflict', 'plan-limit-exceeded', 'billing-unavailable', 'forbidden',
]);

/**
 * The gateway's side of holds and transfers (workflows/money). Each request is one round trip to
 * Temporal: update-with-start creates the workflow (id `money.<kind>:<tenantId>:<Idempotency-Key>`)
 * and its update answers the result as soon as the workflow's local activity committed it, with no
 * polling. A retried request finds the running workflow (conflict policy USE_EXISTING) or, once it
 * has finished, the stored answer. A refused request stores nothing and its workflow completes with
 * the refusal as its result (a 4xx is no fault): a retry with its key then starts a new run, which
 * evaluates the request again (withStart); a run that failed (a real fault) may be replaced at once
 * (reuse policy ALLOW_DUPLICATE_FAILED_ONLY).
 */
export class MoneyFlows {
  /** A hold's TTL when the request names none (MONEY_HOLD_TTL_HOURS). */
  readonly defaultTtlSeconds: number;

  constructor(private readonly deps: MoneyFlowDeps) {
    this.defaultTtlSeconds = deps.config.moneyFlows.holdTtlHours * 3600;
  }

  async placeHold(tenantId: string, request: HoldRequest, key: string): Promise<TransactionView> {
    const idempotency = this.use('hold', key, request);
    const limits = await this.deps.limits.limitsFor(tenantId);
    const args = [{ tenantId, ...request, limits, maxOpenHolds: this.deps.config.moneyFlows.maxHoldsPerWallet, idempotency }] as const;
    return this.withStart(tenantId, idempotency, `money.hold:${tenantId}:${key}`, async (client, options) =>
      client.workflow.executeUpdateWithStart(holdPlaced, {
        args: [{ requestHash: idempotency.requestHash }],
        startWorkflowOperation: new WithStartWorkflowOperation<typeof moneyHold>('moneyHold', { ...options, args }),
      }));
  }

  async transfer(tenantId: string, request: TransferRequest, key: string): Promise<TransactionView> {
    if (request.fromWalletId === request.toWalletId) {
      throw problems.validation([{ field: 'toWalletId', code: 'INVALID_VALUE', message: 'must differ from fromWalletId' }]);
    }
    const idempotency = this.use('transfer', key, request);
    const limits = await this.deps.limits.limitsFor(tenantId);
    const args = [{ tenantId, ...request, limits, idempotency }] as const;
    return this.withStart(tenantId, idempotency, `money.transfer:${tenantId}:${key}`, async (client, options) =>
      client.workflow.executeUpdateWithStart(transferDone, {
        args: [{ requestHash: idempotency.requestHash }],
        startWorkflowOperation: new WithStartWorkflowOperation<typeof moneyTransfer>('moneyTransfer', { ...options, args }),
      }));
  }

  /**
   * Confirm or cancel through the hold's workflow (a Temporal Update answers the resulting
   * transaction). The hold row names the workflow (its idempotency key). A stored answer for this
   * key is replayed without asking Temporal; a finished workflow is answered from the hold's row.
   */
  async settle(tenantId: string, action: 'confirm' | 'cancel', holdId: string, key: string, walletId?: string): Promise<TransactionView> {
    const idempotency = this.use(action, key, { holdId, action });
    const { hold, stored } = await withTenant(this.deps.db, tenantId, async (tx) => ({
      hold: await selectTransaction(tx, tenantId, holdId),
      stored: await storedAnswerFor(tx, idempotentRequestOf(tenantId, idempotency)),
    }));
    if (!hold || hold.type !== 'hold' || (walletId !== undefined && hold.walletId !== walletId)) throw problems.notFound('hold');
    if (stored) return stored.body as TransactionView;
    const client = await this.client();
    try {
      return await client.workflow.getHandle(`money.hold:${tenantId}:${hold.idempotencyKey}`)
        .executeUpdate(settleHold, { args: [{ action, idempotency }] });
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return this.settledWithoutWorkflow(tenantId, hold, idempotency);
      throw refusalOf(error);
    }
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
    idempotency: IdempotencyUse,
    workflowId: string,
    run: (client: TemporalHandle['client'], options: StartOptions) => Promise<TransactionView>,
  ): Promise<TransactionView> {
    const client = await this.client();
    try {
      return await run(client, this.startOptions(workflowId, 'ALLOW_DUPLICATE_FAILED_ONLY'));
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
      return await run(client, this.startOptions(workflowId, 'ALLOW_DUPLICATE'));
    } catch (error) {
      throw refusalOf(error);
    }
  }

  private startOptions(workflowId: string, workflowIdReusePolicy: StartOptions['workflowIdReusePolicy']): StartOptions {
    return { workflowId, taskQueue: this.deps.config.moneyFlows.taskQueue, workflowIdConflictPolicy: 'USE_EXISTING', workflowIdReusePolicy };
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
    if (cause instanceof ApplicationFailure && cause.type && REFUSALS.has(cause.type)) {
      const extensions = (cause.details?.[0] ?? {}) as Record<string, unknown>;
      return new Problem(cause.type as ProblemType, cause.message, extensions);
    }
  }
  return error;
}
