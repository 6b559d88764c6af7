import { currentRequestContext } from '../../../common/context';
import { isUuid } from '../../../common/ids';
import { problems } from '../../../common/problems';
import { selectPlan } from '../../../db/queries/billing/plans.queries';
import { selectSubscription } from '../../../db/queries/billing/subscriptions.queries';
import { insertWebhookEvent } from '../../../db/queries/billing/webhooks.queries';
import { withTenant } from '../../../db/tenant';
import type { BillingProvider } from '../../../workflows/billing/billing.messages';
import type { BillingDeps } from '../deps';
import { parseWebhook } from './provider-events';
import { paddleSignatureValid, stripeSignatureValid } from './signatures';

export interface WebhookReceipt {
  received: true;
  /** The provider delivered this event id before; nothing was done again. */
  duplicate: boolean;
  /** Recorded for the subscription workflow (delivered after the answer); false for event types or tenants the platform does not act on. */
  handled: boolean;
}

/** Each provider's signature header, as the route declares it. */
export const SIGNATURE_HEADERS = { stripe: 'Stripe-Signature', paddle: 'Paddle-Signature' } as const satisfies Record<BillingProvider, string>;

function verify(deps: BillingDeps, provider: BillingProvider, header: string | undefined, body: Buffer): void {
  const { billing } = deps.config;
  const check = {
    secret: provider === 'stripe' ? billing.stripeWebhookSecret : billing.paddleWebhookSecret,
    toleranceSeconds: billing.webhookToleranceSeconds,
    nowSeconds: Math.floor(Date.now() / 1000),
  };
  const valid = provider === 'stripe' ? stripeSignatureValid(header, body, check) : paddleSignatureValid(header, body, check);
  if (!valid) throw problems.webhookSignatureInvalid();
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw problems.validation([{ field: 'body', code: 'INVALID_FORMAT', message: 'The body is not JSON' }]);
  }
}

/**
 * POST /billing/webhooks/{provider}: verified over the raw bytes first (401 otherwise), then recorded
 * in one transaction of the tenant, not yet delivered, with the event the workflow needs. After the
 * commit the receipt is handed to the tenant's subscription workflow off the response path
 * (WebhookDelivery), and the answer does not wait for it (docs/reference/billing.md#rule-25: the work continues in the
 * workflow; issue 5: under 100 ms at p99). A receipt that exists is delivered at least once: by the
 * dispatch, or by the redelivery sweep when the dispatch fails; the workflow applies an event id once.
 */
export async function receiveWebhook(
  deps: BillingDeps, provider: BillingProvider, signature: string | undefined, body: Buffer,
): Promise<WebhookReceipt> {
  verify(deps, provider, signature, body);
  const parsed = parseWebhook(provider, parseJson(body));
  if (!parsed) throw problems.validation([{ field: 'body', code: 'REQUIRED', message: 'The event id and type are missing' }]);
  const ignored: WebhookReceipt = { received: true, duplicate: false, handled: false };
  const { event, tenantId } = parsed;
  if (!event) return ignored;
  if (!tenantId || !isUuid(tenantId)) {
    deps.logger.warn({ provider, eventId: parsed.eventId, eventType: parsed.eventType }, 'webhook without a tenant ignored');
    return ignored;
  }
  // A plan the provider names that is not in our catalogue is not synced.
  if (event.planId && !(await selectPlan(deps.db, event.planId))) delete event.planId;

  const traceId = currentRequestContext()?.traceId;
  const receipt = await withTenant(deps.db, tenantId, async (tx): Promise<WebhookReceipt> => {
    const subscription = await selectSubscription(tx, tenantId);
    if (!subscription) {
      deps.logger.warn({ provider, eventId: parsed.eventId, tenantId }, 'webhook for an unknown tenant ignored');
      return ignored;
    }
    if (!(await insertWebhookEvent(tx, { provider, eventId: parsed.eventId, eventType: parsed.eventType, tenantId, event, traceId }))) {
      return { received: true, duplicate: true, handled: false };
    }
    if (subscription.status === 'terminated' && event.kind === 'payment_succeeded') {
      // Terminated → active is refused (docs/reference/billing.md#rule-26). Not recorded, so a recovery lets a retry through.
      throw problems.invalidTransition('The subscription is terminated; a payment cannot reactivate it');
    }
    return { received: true, duplicate: false, handled: true };
  });
  if (receipt.handled) deps.webhookDelivery.dispatch({ tenantId, event, traceId });
  return receipt;
}
