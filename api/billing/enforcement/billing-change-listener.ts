import { randomUUID } from 'node:crypto';
import { EVENT_HEADERS, headerValue } from '../../../common/events/envelope';
import { topics } from '../../../common/events/topics';
import { createConsumer, onGroupJoin, type Consumer, type Kafka } from '../../../common/kafka';
import type { Logger } from '../../../common/logger';
import type { PlanCache } from './plan-cache';

/** The billing events after which the gateway reloads a tenant's plan info (document 1, Events). */
export const PLAN_CACHE_EVENTS: ReadonlySet<string> = new Set(['billing.plan.changed', 'billing.subscription.changed']);

/**
 * Drops a tenant's cached plan info when billing.plan.changed or billing.subscription.changed
 * arrives on platform.billing.events, as RoleChangeListener does for permissions: a consumer group
 * of its own per gateway instance (each must see every change), from the latest offset, events told
 * apart by their headers. While Kafka is away the cache's TTL (BILLING_CACHE_TTL) bounds staleness.
 */
export class BillingChangeListener {
  readonly groupId = `gateway.plan-cache.${randomUUID()}`;
  private consumer: Consumer | null = null;
  private joinedOnce!: () => void;
  /** Settles the first time the consumer has joined its group (tests wait for it). */
  readonly joined = new Promise<void>((resolve) => { this.joinedOnce = resolve; });

  constructor(private readonly kafka: Kafka, private readonly cache: PlanCache, private readonly logger: Logger) {}

  /** Connects and starts consuming; throws when Kafka cannot be reached (the caller retries). */
  async start(): Promise<void> {
    const consumer = createConsumer(this.kafka, { groupId: this.groupId, maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
    onGroupJoin(consumer, () => this.joinedOnce());
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topics.billing.name], fromBeginning: false });
      await consumer.run({
        eachMessage: async ({ message }) => {
          if (!PLAN_CACHE_EVENTS.has(headerValue(message, EVENT_HEADERS.type) ?? '')) return;
          const tenantId = headerValue(message, EVENT_HEADERS.tenantId);
          if (tenantId) this.cache.invalidateTenant(tenantId);
        },
      });
    } catch (error) {
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
    this.consumer = consumer;
    this.logger.info({ groupId: this.groupId }, 'plan cache follows billing plan and subscription changes');
  }

  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = null;
    await consumer?.disconnect().catch((error: unknown) => this.logger.warn({ err: error }, 'plan cache consumer did not disconnect cleanly'));
  }
}
