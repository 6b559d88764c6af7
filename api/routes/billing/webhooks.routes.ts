import Joi from 'joi';
import type { BillingDeps } from '../../../services/billing/deps';
import { receiveWebhook, SIGNATURE_HEADERS } from '../../../services/billing/webhooks/receive';
import { rawBodyOf } from '../../middleware/body-guard';
import type { BillingProvider } from '../../../workflows/billing/billing.messages';
import { defineRoute, type AnyRoute } from '../../http/route-registry';

const providerParams = Joi.object<{ provider: BillingProvider }>({ provider: Joi.string().valid('stripe', 'paddle').required() });

const receipt = Joi.object({
  received: Joi.boolean().valid(true).required(),
  duplicate: Joi.boolean().required(),
  handled: Joi.boolean().required(),
});

/** Document 1, Webhook rules: the payment providers' events, authenticated by their signatures. */
export function webhookRoutes(deps: BillingDeps): AnyRoute[] {
  return [
    defineRoute<{ provider: BillingProvider }>({
      namespace: 'billing', method: 'POST', path: '/billing/webhooks/:provider', operationId: 'billing.webhooks.receive',
      summary: 'Receives a Stripe or Paddle event',
      description: 'Signature (Stripe-Signature or Paddle-Signature, HMAC-SHA256 over the raw body, 5-minute tolerance) checked '
        + 'first: missing or wrong is 401 webhook-signature-invalid. Duplicate event ids answer 200 with duplicate: true. Handled: '
        + 'Stripe invoice.paid, invoice.payment_failed, customer.subscription.deleted, customer.subscription.updated; Paddle '
        + 'transaction.completed, transaction.payment_failed, subscription.canceled, subscription.updated; other types are '
        + 'acknowledged (handled: false). The work continues in the tenant\'s subscription workflow.',
      auth: 'public', rateLimit: 'ip', rawBody: true,
      schemas: { params: providerParams, response: { 200: receipt } },
      async handler(ctx) {
        const { provider } = ctx.guard.params;
        ctx.body = await receiveWebhook(deps, provider, ctx.get(SIGNATURE_HEADERS[provider]) || undefined, rawBodyOf(ctx));
      },
    }),
  ];
}
