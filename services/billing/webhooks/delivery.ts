import { AsyncLocalStorage } from 'node:async_hooks';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Logger } from '../../../common/logger';
import type { DatabasePool } from '../../../db/pool';
import { markWebhookEventDelivered, selectWebhookDeliveryBacklog } from '../../../db/queries/billing/webhooks.queries';
import { withTenant } from '../../../db/tenant';
import type { ProviderEvent } from '../../../workflows/billing/billing.messages';
import type { SubscriptionWorkflows } from '../subscription-workflows';

/** A receipt that has committed and is still to be handed to the tenant's subscription workflow. */
export interface CommittedReceipt {
  tenantId: string;
  event: ProviderEvent;
  traceId?: string;
}

type Outcome = 'delivered' | 'failed' | 'deferred' | 'unmarked';

/**
 * Delivers committed webhook receipts to the subscription workflows, off the response path (issue 5:
 * the answer does not wait for Temporal). `dispatch` queues the receipt and returns at once; at most
 * `concurrency` signals are in flight per gateway, so a burst of webhooks does not become a burst of
 * signals that compete with the answers and miss their deadline together; once
 * the workflow acknowledged a signal, the receipt is marked delivered. A failed signal (Temporal away,
 * the process stopping) leaves the receipt undelivered, and the redelivery Schedule
 * (workflows/billing/webhook-redelivery.workflow.ts) delivers it later; so does a receipt that finds
 * the queue full (`queueLimit`), or that waited in it for `handOverAfterMs` (half the sweep's interval:
 * the sweep takes receipts older than its interval, so the gateway and the sweep do not both deliver
 * the same receipt while a backlog drains). The table is the durable queue; this one only saves the
 * wait. A failed mark means the sweep delivers it once more, which the workflow ignores (it applies an
 * event id once).
 */
export class WebhookDelivery {
  /** Each receipt with the request context it was received in (its trace goes into the signal's headers). */
  private readonly queue: Array<{ receipt: CommittedReceipt; queuedAt: number; inContext: <R>(fn: () => R) => R }> = [];
  private running = 0;
  private readonly outcomes?: Counter<'outcome'>;
  private readonly lag?: Histogram;

  constructor(
    private readonly deps: {
      db: DatabasePool; workflows: SubscriptionWorkflows; logger: Logger; concurrency: number; queueLimit: number; handOverAfterMs: number;
    },
    registry?: Registry,
  ) {
    if (!registry) return;
    this.outcomes = new Counter({
      name: 'billing_webhook_dispatch_total',
      help: 'Webhook receipts the gateway handed to subscription workflows after commit: delivered; failed or deferred '
        + '(queue full or waited too long), both left to the redelivery sweep; unmarked (delivered, marker not written)',
      labelNames: ['outcome'], registers: [registry],
    });
    this.lag = new Histogram({
      name: 'billing_webhook_delivery_lag_seconds',
      help: 'From the receipt\'s commit to the workflow\'s acknowledgement of its signal, for receipts this gateway delivered',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [registry],
    });
    registerBacklogGauges(registry, deps.db, deps.logger);
  }

  dispatch(receipt: CommittedReceipt): void {
    if (this.queue.length >= this.deps.queueLimit) {
      this.handOver(receipt, 'webhook delivery queue full; the redelivery sweep will deliver it');
      return;
    }
    this.queue.push({ receipt, queuedAt: Date.now(), inContext: AsyncLocalStorage.snapshot() });
    // setImmediate: the response (already decided) is written before a signal takes the event loop.
    // drain does not reject: deliver logs and counts each failure itself.
    if (this.running < this.deps.concurrency) setImmediate(() => void this.drain());
  }

  private async drain(): Promise<void> {
    if (this.running >= this.deps.concurrency) return;
    this.running += 1;
    try {
      for (let next = this.queue.shift(); next; next = this.queue.shift()) {
        const { receipt, queuedAt, inContext } = next;
        if (Date.now() - queuedAt >= this.deps.handOverAfterMs) this.handOver(receipt, 'webhook waited too long for delivery; the redelivery sweep will deliver it');
        else await inContext(() => this.deliver(receipt, queuedAt));
      }
    } finally {
      this.running -= 1;
    }
  }

  private async deliver({ tenantId, event, traceId }: CommittedReceipt, committedAt: number): Promise<void> {
    const log = this.deps.logger.child({ traceId, tenantId, provider: event.provider, eventId: event.eventId });
    try {
      await this.deps.workflows.signal(tenantId, event);
      this.lag?.observe((Date.now() - committedAt) / 1000);
    } catch (err) {
      this.count('failed');
      log.warn({ err }, 'webhook not delivered to the subscription workflow; the redelivery sweep will deliver it');
      return;
    }
    try {
      await withTenant(this.deps.db, tenantId, (tx) => markWebhookEventDelivered(tx, event.provider, event.eventId));
      this.count('delivered');
      log.debug('webhook delivered to the subscription workflow');
    } catch (err) {
      this.count('unmarked');
      log.warn({ err }, 'webhook delivered but not marked; the redelivery sweep will deliver it again (ignored as a duplicate)');
    }
  }

  private handOver({ traceId, tenantId, event }: CommittedReceipt, message: string): void {
    this.count('deferred');
    this.deps.logger.warn({ traceId, tenantId, provider: event.provider, eventId: event.eventId }, message);
  }

  private count(outcome: Outcome): void {
    this.outcomes?.inc({ outcome });
  }
}

/**
 * The delivery backlog across tenants, read when /metrics is scraped: how many receipts wait and how
 * old the oldest is. A backlog that grows or ages past the sweep interval means deliveries fail.
 */
function registerBacklogGauges(registry: Registry, db: DatabasePool, logger: Logger): void {
  let pending: ReturnType<typeof selectWebhookDeliveryBacklog> | undefined;
  // Both gauges are collected in one scrape: one query serves them.
  const backlog = () => {
    pending ??= selectWebhookDeliveryBacklog(db).finally(() => { pending = undefined; });
    return pending;
  };
  const collect = async (set: (value: { undelivered: number; oldestAgeSeconds: number | null }) => void) => {
    try {
      set(await backlog());
    } catch (err) {
      // The scrape still answers the gateway's other metrics; this pair keeps its last value.
      logger.warn({ err }, 'webhook delivery backlog not read');
    }
  };
  new Gauge({
    name: 'billing_webhook_undelivered_events', help: 'Webhook receipts recorded but not yet delivered to their subscription workflow',
    registers: [registry],
    async collect() {
      await collect(({ undelivered }) => this.set(undelivered));
    },
  });
  new Gauge({
    name: 'billing_webhook_oldest_undelivered_seconds', help: 'Age of the oldest undelivered webhook receipt (0 when none)',
    registers: [registry],
    async collect() {
      await collect(({ oldestAgeSeconds }) => this.set(oldestAgeSeconds ?? 0));
    },
  });
}
