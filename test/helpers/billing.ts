import { createHmac } from 'node:crypto';
import { z } from 'zod';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { sql, type DatabasePool } from '../../db/pool';
import { insertTrialSubscription, selectSubscription, type SubscriptionRow } from '../../db/queries/billing/subscriptions.queries';
import { withTenant } from '../../db/tenant';
import type { DeliverEmailInput } from '../../activities/notify/mail.activities';
import type { LifecycleSettings } from '../../workflows/billing/billing.messages';
import { bundleWorkflows } from '../../workers/temporal/worker';
import type { TestGateway } from './app';

/** Helpers for the billing limit tests: subscription states are set directly, as the billing workflow would. */

export interface SubscriptionChange {
  status?: 'trialing' | 'active' | 'past_due' | 'suspended' | 'terminated' | 'canceled';
  planId?: string;
  /** pending_change as the subscription workflow writes it for a downgrade; null clears it. */
  pendingChange?: { planId: string; kind: 'downgrade' | 'upgrade' } | null;
}

/** Changes the tenant's subscription as the owner role and drops the gateway's cached copy (as the billing events do). */
export async function setSubscription(gateway: TestGateway, owner: DatabasePool, tenantId: string, change: SubscriptionChange): Promise<void> {
  const pending = change.pendingChange === undefined ? sql.fragment`pending_change`
    : change.pendingChange === null ? sql.fragment`NULL`
      : sql.fragment`${sql.jsonb({ ...change.pendingChange, requestedAt: new Date().toISOString(), effectiveAt: new Date().toISOString() })}`;
  await owner.query(sql.unsafe`
    UPDATE subscriptions SET status = coalesce(${change.status ?? null}, status), plan_id = coalesce(${change.planId ?? null}, plan_id),
           pending_change = ${pending}, version = version + 1, updated_at = now()
    WHERE tenant_id = ${tenantId}
  `);
  gateway.runtime.gateway.limits?.cache.invalidateTenant(tenantId);
}

/** Billing test fixtures: tenants with owners and a trialing subscription, settings, mail capture, signatures. */

export interface BillingTenant {
  tenantId: string;
  subscriptionId: string;
  ownerEmail: string;
}

/**
 * A tenant as registration leaves it (owner with the owner role, a trialing subscription), plus
 * `extraMembers` active members, written as the owner role.
 */
export async function seedBillingTenant(
  owner: DatabasePool, { trialDays = 14, planId = 'starter', extraMembers = 0, nowMs }: { trialDays?: number; planId?: string; extraMembers?: number; nowMs?: number } = {},
): Promise<BillingTenant> {
  const tenantId = newId();
  const ownerEmail = `owner.${newId()}@example.test`;
  const subscription = await withTenant(owner, tenantId, async (tx) => {
    await tx.query(sql.unsafe`INSERT INTO tenants (id, name) VALUES (${tenantId}, 'Billing test')`);
    const roleId = newId();
    await tx.query(sql.unsafe`INSERT INTO roles (id, tenant_id, name, permissions, built_in) VALUES (${roleId}, ${tenantId}, 'owner', '{*}', true)`);
    for (let i = 0; i <= extraMembers; i += 1) {
      const userId = newId();
      const email = i === 0 ? ownerEmail : `member.${newId()}@example.test`;
      await tx.query(sql.unsafe`INSERT INTO users (id, email) VALUES (${userId}, ${email})`);
      await tx.query(sql.unsafe`INSERT INTO memberships (tenant_id, user_id) VALUES (${tenantId}, ${userId})`);
      if (i === 0) await tx.query(sql.unsafe`INSERT INTO user_roles (tenant_id, user_id, role_id) VALUES (${tenantId}, ${userId}, ${roleId})`);
    }
    const trial = await insertTrialSubscription(tx, { id: newId(), tenantId, planId, trialDays });
    // Under the time-skipping server the workflow's clock runs ahead of the database's: the trial
    // is put where the workflow's "now" is.
    if (nowMs !== undefined) {
      const start = new Date(nowMs).toISOString();
      const end = new Date(nowMs + trialDays * 86_400_000).toISOString();
      await tx.query(sql.unsafe`
        UPDATE subscriptions SET trial_ends_at = ${end}::timestamptz, current_period_start = ${start}::timestamptz, current_period_end = ${end}::timestamptz
        WHERE id = ${trial.id}
      `);
    }
    return trial;
  });
  return { tenantId, subscriptionId: subscription.id, ownerEmail };
}

export function subscriptionRowOf(owner: DatabasePool, tenantId: string): Promise<SubscriptionRow | null> {
  return withTenant(owner, tenantId, (tx) => selectSubscription(tx, tenantId));
}

/** The documented lifecycle (config defaults), with notices on the test's own queue. */
export function lifecycleSettings(notifyTaskQueue: string): LifecycleSettings {
  return { ...config().billing.lifecycle, dunningNoticeDays: [...config().billing.lifecycle.dunningNoticeDays], notifyTaskQueue };
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** The platform bundle plus the termination stand-in of fixtures/billing-workflows.ts. */
export function billingTestBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflows(require.resolve('../workflows/fixtures/billing-workflows'));
  return bundle;
}

/** A deliverEmail that records instead of sending, for counting notices. */
export function capturedMail() {
  const sent: DeliverEmailInput[] = [];
  return {
    sent,
    to: (address: string) => sent.filter((mail) => mail.message.to === address),
    activities: {
      async deliverEmail(input: DeliverEmailInput): Promise<void> {
        sent.push(input);
      },
    },
  };
}

const outboxRow = z.object({ type: z.string(), data: z.record(z.string(), z.unknown()) });

/** The billing events of a tenant in the outbox, in order. */
export function billingEventsOf(owner: DatabasePool, tenantId: string) {
  return owner.any(sql.type(outboxRow)`
    SELECT type, data FROM outbox_events WHERE tenant_id = ${tenantId} AND type LIKE 'billing.%' ORDER BY seq
  `);
}

/** Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">. */
export function stripeSignature(body: string, secret = config().billing.stripeWebhookSecret, at = Math.floor(Date.now() / 1000)): string {
  return `t=${at},v1=${createHmac('sha256', secret).update(`${at}.${body}`).digest('hex')}`;
}

/** Paddle-Signature: ts=<unix>;h1=<hex HMAC-SHA256 of "ts:body">. */
export function paddleSignature(body: string, secret = config().billing.paddleWebhookSecret, at = Math.floor(Date.now() / 1000)): string {
  return `ts=${at};h1=${createHmac('sha256', secret).update(`${at}:${body}`).digest('hex')}`;
}
