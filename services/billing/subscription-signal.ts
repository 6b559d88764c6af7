import type { Client } from '@temporalio/client';
import type { Config } from '../../common/config';
import {
  providerEventSignal, subscriptionWorkflowId, type LifecycleSettings, type ProviderEvent, type SubscriptionInput,
} from '../../workflows/billing/billing.messages';
import type { subscriptionLifecycle } from '../../workflows/billing/subscription.workflow';

/**
 * Where a tenant's subscription workflow runs and what it starts with, when a signal has to start it:
 * the lifecycle durations from configuration (workflows read none) and the task queues. The gateway
 * builds it from its configuration; the webhook redelivery Schedule carries it as its argument.
 */
export interface SubscriptionTarget {
  taskQueue: string;
  settings: LifecycleSettings;
}

export function subscriptionTarget(cfg: Pick<Config, 'billing' | 'mail'>): SubscriptionTarget {
  const { lifecycle, taskQueue } = cfg.billing;
  return { taskQueue, settings: { ...lifecycle, dunningNoticeDays: [...lifecycle.dunningNoticeDays], notifyTaskQueue: cfg.mail.taskQueue } };
}

export function subscriptionInput(target: SubscriptionTarget, tenantId: string): SubscriptionInput {
  return { tenantId, settings: target.settings };
}

/**
 * Hands a verified provider event to the tenant's workflow (`subscription:<tenantId>`), starting it
 * when it is not running (reconciliation: a tenant without a workflow gets one at its next webhook).
 * Used by the gateway right after a receipt commits and by the redelivery sweep; a repeat is harmless,
 * because the workflow applies a provider event id once.
 */
export async function signalProviderEvent(client: Client, target: SubscriptionTarget, tenantId: string, event: ProviderEvent): Promise<void> {
  await client.workflow.signalWithStart<typeof subscriptionLifecycle, [ProviderEvent]>('subscriptionLifecycle', {
    workflowId: subscriptionWorkflowId(tenantId),
    taskQueue: target.taskQueue,
    args: [subscriptionInput(target, tenantId)],
    signal: providerEventSignal,
    signalArgs: [event],
  });
}
