import { randomUUID } from 'node:crypto';
import { EVENT_HEADERS, headerValue } from '../../common/events/envelope';
import { topics } from '../../common/events/topics';
import { createConsumer, onGroupJoin, type Consumer, type Kafka } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import type { PermissionCache } from './permission-cache';

export const ROLE_CHANGED = 'auth.role.changed';

/**
 * Drops a tenant's cached permissions when `auth.role.changed` arrives on platform.auth.events
 * (document 1, Events). Every gateway instance must see every change, so each reads in a consumer
 * group of its own (`gateway.permission-cache.<instance>`), from the latest offset: what happened
 * before it started is not in its cache. Nothing depends on it for correctness (the cache checks the
 * tenant's RBAC version on every request); it only spares the next request a stale entry's reload
 * check and frees memory early. Events are told apart by their headers, so the value is not parsed.
 */
export class RoleChangeListener {
  readonly groupId = `gateway.permission-cache.${randomUUID()}`;
  private consumer: Consumer | null = null;
  private joinedOnce!: () => void;
  /** Settles the first time the consumer has joined its group (tests wait for it). */
  readonly joined = new Promise<void>((resolve) => { this.joinedOnce = resolve; });

  constructor(private readonly kafka: Kafka, private readonly cache: PermissionCache, private readonly logger: Logger) {}

  /** Connects and starts consuming; throws when Kafka cannot be reached (the caller retries). */
  async start(): Promise<void> {
    const consumer = createConsumer(this.kafka, { groupId: this.groupId, maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
    onGroupJoin(consumer, () => this.joinedOnce());
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topics.auth.name], fromBeginning: false });
      await consumer.run({
        eachMessage: async ({ message }) => {
          if (headerValue(message, EVENT_HEADERS.type) !== ROLE_CHANGED) return;
          const tenantId = headerValue(message, EVENT_HEADERS.tenantId);
          if (tenantId) this.cache.invalidateTenant(tenantId);
        },
      });
    } catch (error) {
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
    this.consumer = consumer;
    this.logger.info({ groupId: this.groupId }, 'permission cache follows auth.role.changed');
  }

  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = null;
    await consumer?.disconnect().catch((error: unknown) => this.logger.warn({ err: error }, 'permission cache consumer did not disconnect cleanly'));
  }
}
