/**
 * What the webhook dispatcher, the delivery workflow (workflows/events/webhook-delivery.workflow.ts)
 * and its activities exchange. Bundled into the workflow sandbox, so only types and pure
 * definitions live here.
 */
import type { EventEnvelope } from '../../common/event-envelope';

/** Where the dispatcher read the event: a dead letter of the delivery keeps it, so a retry re-publishes it there. */
export interface WebhookEventSource {
  topic: string;
  partition: number;
  offset: string;
  /** The partition key it was published with. */
  key: string;
  correlationId: string | null;
}

export interface WebhookDeliveryInput {
  tenantId: string;
  endpointId: string;
  /** The event as it was published; the POSTed body is {id, type, timestamp, data} of it. */
  envelope: EventEnvelope;
  /**
   * Where the event was read from the bus; null for POST /v1/webhooks/endpoints/{id}/test, whose
   * `webhook.test` event is on no topic: it is tried once, never retried or dead-lettered.
   */
  source: WebhookEventSource | null;
  /** The notify domain's task queue: the mail to the tenant's owners when the endpoint is turned off. */
  notifyTaskQueue: string;
}

/** What one attempt came to (the activity's answer). */
export type WebhookAttemptResult =
  | { outcome: 'delivered'; responseStatus: number }
  | {
    outcome: 'failed';
    responseStatus: number | null;
    error: string;
    /** This failure made the endpoint's failing streak 5 days long: the endpoint is turned off now. */
    disabledNow: boolean;
    /** The endpoint's URL, for the owners' mail when it is turned off. */
    url: string;
  }
  /** The endpoint was deleted or turned off before the attempt: nothing was sent. */
  | { outcome: 'endpoint-gone' | 'endpoint-disabled' };

/** The workflow's result, and a test job's (GET /v1/jobs/{jobId}, kind webhook-test). */
export interface WebhookDeliveryResult {
  status: 'delivered' | 'dead-lettered' | 'failed' | 'endpoint-gone';
  /** Requests made. */
  attempts: number;
  /** The last answer's HTTP status; null when there was none (a timeout, a refused address) or no request. */
  responseStatus: number | null;
}

export interface WebhookAttemptInput {
  tenantId: string;
  endpointId: string;
  envelope: EventEnvelope;
  /** 1 to 8: the first try and the seven retries. */
  attempt: number;
  /** The workflow's time of the attempt: the attempts list and the endpoint's failing streak read it. */
  attemptedAt: string;
  /** When the next attempt will be made if this one fails; null for the last one. */
  nextAttemptAt: string | null;
  /** A test delivery reaches an endpoint that is turned off too (to check a receiver before turning it on again). */
  evenIfDisabled: boolean;
}

export interface WebhookDeadLetterInput {
  tenantId: string;
  endpointId: string;
  envelope: EventEnvelope;
  source: WebhookEventSource;
  attempts: number;
  lastError: string;
}

/**
 * The pauses before the retries (issue 35): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. Eight
 * requests in all over about 27.6 hours, then the event is dead-lettered.
 */
export const WEBHOOK_RETRY_DELAYS_MS: readonly number[] = [
  5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000,
];

/** An endpoint whose every attempt failed for this long is turned off (issue 35). */
export const WEBHOOK_DISABLE_AFTER_MS = 5 * 24 * 3_600_000;

/** The consumer group a delivery's dead letter is kept under: a retry of it delivers to this endpoint again. */
export function webhookConsumerGroup(endpointId: string): string {
  return `webhooks.${endpointId}`;
}

/**
 * One delivery of one event to one endpoint (docs/decisions/temporal.md, Workflow ids): a business key, so an event the bus
 * delivers twice never starts a second delivery, and the Temporal UI finds it by tenant, endpoint
 * and event.
 */
export function webhookDeliveryWorkflowId(tenantId: string, endpointId: string, eventId: string): string {
  return `webhook.delivery:${tenantId}:${endpointId}:${eventId}`;
}

/** The workflow's signature, for starting it by name (services/events/webhooks/). */
export type WebhookDeliveryWorkflow = (input: WebhookDeliveryInput) => Promise<WebhookDeliveryResult>;
