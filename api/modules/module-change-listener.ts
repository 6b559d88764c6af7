import { randomUUID } from 'node:crypto';
import { EVENT_HEADERS, headerValue } from '../../common/events/envelope';
import { topics } from '../../common/events/topics';
import { createConsumer, onGroupJoin, type Consumer, type Kafka } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import type { InstalledModules } from './installed-modules';

export const MODULE_EVENT_PREFIX = 'module.registry.';

/**
 * Drops a tenant's cached installed modules when a module.registry.* event of the tenant arrives on
 * platform.module.events, so an install or uninstall made through another gateway process takes
 * effect here at once rather than after the cache's TTL. Every gateway instance must see every
 * change, so each reads in a consumer group of its own, from the latest offset (what happened before
 * it started is not in its cache). Events are told apart by their headers; the value is not parsed.
 */
export class ModuleChangeListener {
  readonly groupId = `gateway.module-cache.${randomUUID()}`;
  private consumer: Consumer | null = null;
  private joinedOnce!: () => void;
  /** Settles the first time the consumer has joined its group (tests wait for it). */
  readonly joined = new Promise<void>((resolve) => { this.joinedOnce = resolve; });

  constructor(private readonly kafka: Kafka, private readonly installed: InstalledModules, private readonly logger: Logger) {}

  /** Connects and starts consuming; throws when Kafka cannot be reached (the caller retries). */
  async start(): Promise<void> {
    const consumer = createConsumer(this.kafka, { groupId: this.groupId, maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
    onGroupJoin(consumer, () => this.joinedOnce());
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topics.module.name], fromBeginning: false });
      await consumer.run({
        eachMessage: async ({ message }) => {
          if (!headerValue(message, EVENT_HEADERS.type)?.startsWith(MODULE_EVENT_PREFIX)) return;
          const tenantId = headerValue(message, EVENT_HEADERS.tenantId);
          if (tenantId) this.installed.invalidate(tenantId);
        },
      });
    } catch (error) {
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
    this.consumer = consumer;
    this.logger.info({ groupId: this.groupId }, 'installed-modules cache follows module.registry events');
  }

  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = null;
    await consumer?.disconnect().catch((error: unknown) => this.logger.warn({ err: error }, 'module cache consumer did not disconnect cleanly'));
  }
}
