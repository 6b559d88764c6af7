import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import type { Config } from '../../common/config';
import { problems } from '../../common/problems';
import type { TemporalHandle } from '../../common/temporal/client';
import { signalProviderEvent, subscriptionInput, subscriptionTarget, type SubscriptionTarget } from './subscription-signal';
import {
  subscriptionWorkflowId,
  type ProviderEvent, type SubscriptionInput, type SubscriptionView, type UpdateRefusal,
} from '../../workflows/billing/billing.messages';
import type { subscriptionLifecycle } from '../../workflows/billing/subscription.workflow';
import type { UpdateDefinition } from '@temporalio/common';

type Lifecycle = typeof subscriptionLifecycle;
const WORKFLOW_TYPE = 'subscriptionLifecycle';

/**
 * How the gateway reaches a tenant's subscription workflow (`subscription:<tenantId>`). Every entry
 * point makes sure the workflow exists (start with conflict policy USE_EXISTING, signal-with-start), so
 * a tenant whose workflow is missing (created before billing was deployed, or whose first run gave up
 * during an outage) gets one at its next billing call: that is the reconciliation path.
 */
export class SubscriptionWorkflows {
  private readonly target: SubscriptionTarget;

  constructor(
    private readonly temporal: () => TemporalHandle | undefined,
    private readonly config: Readonly<Config>,
  ) {
    this.target = subscriptionTarget(config);
  }

  /** The workflow input: the lifecycle durations from configuration (workflows read none). */
  input(tenantId: string): SubscriptionInput {
    return subscriptionInput(this.target, tenantId);
  }

  /** Starts the tenant's workflow, or finds the running one. */
  async start(tenantId: string): Promise<WorkflowHandle<Lifecycle>> {
    const { client } = await this.connected();
    return client.workflow.start<Lifecycle>(WORKFLOW_TYPE, {
      workflowId: subscriptionWorkflowId(tenantId),
      taskQueue: this.target.taskQueue,
      args: [this.input(tenantId)],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    });
  }

  /** Runs an Update and answers its result; a refusal of the workflow becomes its problem. */
  async update<Args extends unknown[]>(tenantId: string, update: UpdateDefinition<SubscriptionView, Args>, ...args: Args): Promise<SubscriptionView> {
    const handle = await this.start(tenantId);
    try {
      // Generic Args fit neither of executeUpdate's overloads (with args, without); the definition names the update.
      return await handle.executeUpdate<SubscriptionView, [unknown]>(update.name, { args: args as unknown as [unknown] });
    } catch (error) {
      throw refusalProblem(error) ?? error;
    }
  }

  /**
   * Hands a verified provider event to the workflow, starting it if it is not running. Bounded by the
   * downstream deadline: the gRPC call is cancelled then, and the receipt stays for the sweep.
   */
  async signal(tenantId: string, event: ProviderEvent): Promise<void> {
    const { client, connection } = await this.connected();
    await connection.withDeadline(Date.now() + this.config.api.downstreamTimeoutMs, () => signalProviderEvent(client, this.target, tenantId, event));
  }

  /** Waits up to the downstream deadline for the gateway's start-up connection to Temporal. */
  private async connected(): Promise<TemporalHandle> {
    const deadline = Date.now() + this.config.api.downstreamTimeoutMs;
    for (let handle = this.temporal(); ; handle = this.temporal()) {
      if (handle) return handle;
      if (Date.now() >= deadline) throw problems.unavailable('Billing is not available yet; try again shortly');
      await sleep(50);
    }
  }
}

/** The workflow refuses an Update with an ApplicationFailure typed by the problem suffix. */
function refusalProblem(error: unknown) {
  if (!(error instanceof WorkflowUpdateFailedError) || !(error.cause instanceof ApplicationFailure)) return undefined;
  const { type, message, details } = error.cause;
  switch (type as UpdateRefusal) {
    case 'optimistic-lock-conflict': return problems.optimisticLockConflict(Number(details?.[0]));
    case 'plan-change-in-progress': return problems.planChangeInProgress();
    case 'invalid-transition': return problems.invalidTransition(message);
    case 'conflict': return problems.conflict(message);
    default: return undefined;
  }
}
