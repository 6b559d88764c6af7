import Joi from 'joi';
import { problems } from '../../../common/problems';
import type { BillingDeps } from '../../../services/billing/deps';
import { receiveWebhook, SIGNATURE_HEADERS } from '../../../services/billing/webhooks/receive';
import { rawBodyOf } from '../../middleware/body-guard';
import type { BillingProvider } from '../../../workflows/billing/billing.messages';
import { defineRoute, type AnyRoute } from '../../http/route-registry';

// An unknown provider is an unknown resource, not a malformed request: 404 (issue 15).
const providerParams = Joi.object<{ provider: BillingProvider }>({
  provider: Joi.string().valid('stripe', 'paddle').required().error(() => problems.notFound('payment provider')),
});

type SignatureHeaders = Partial<Record<(typeof SIGNATURE_HEADERS)[BillingProvider], string>>;

/** Optional, and '' allowed: a missing, empty or wrong signature is 401 webhook-signature-invalid, checked over the raw body. */
const signatureHeaders = Joi.object<SignatureHeaders>({
  'Stripe-Signature': Joi.string().allow('').description('Stripe: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">'),
  'Paddle-Signature': Joi.string().allow('').description('Paddle: ts=<unix>;h1=<hex HMAC-SHA256 of "ts:body">'),
});

const receipt = Joi.object({
  received: Joi.boolean().valid(true).required(),
  duplicate: Joi.boolean().required(),
  handled: Joi.boolean().required(),
});

/** The payment providers' events (docs/reference/billing.md, Rules: payment-provider webhooks), authenticated by their signatures. */
export function webhookRoutes(deps: BillingDeps): AnyRoute[] {
  return [
    defineRoute<{ provider: BillingProvider }, Record<string, never>, undefined, SignatureHeaders>({
      namespace: 'billing', method: 'POST', path: '/billing/webhooks/:provider', operationId: 'billing.webhooks.receive',
      summary: 'Receives a Stripe or Paddle event',
      description: 'Signature (Stripe-Signature or Paddle-Signature, HMAC-SHA256 over the raw body, 5-minute tolerance) checked '
        + 'first: missing or wrong is 401 webhook-signature-invalid. Duplicate event ids answer 200 with duplicate: true. Handled: '
        + 'Stripe invoice.paid, invoice.payment_failed, customer.subscription.deleted, customer.subscription.updated; Paddle '
        + 'transaction.completed, transaction.payment_failed, subscription.canceled, subscription.updated; other types are '
        + 'acknowledged (handled: false). The work continues in the tenant\'s subscription workflow.',
      auth: 'public', rateLimit: 'ip', rawBody: true,
      schemas: { params: providerParams, headers: signatureHeaders, response: { 200: receipt } },
      async handler(ctx) {
        const { params: { provider }, headers } = ctx.guard;
        ctx.body = await receiveWebhook(deps, provider, headers[SIGNATURE_HEADERS[provider]], rawBodyOf(ctx));
      },
    }),
  ];
}
