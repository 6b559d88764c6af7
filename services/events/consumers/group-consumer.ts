import type { Config } from '../../../common/config';
import { runWithRequestContext } from '../../../common/context';
import { newId } from '../../../common/ids';
import { createConsumer, onCrash, onGroupJoin, type Consumer, type Kafka } from '../../../common/kafka';
import type { Logger } from '../../../common/logger';
import { PartitionBatches, runMessageConsumer, type MessageOutcome, type PartitionMessage } from '../../../common/message-consumer';
import type { DatabasePool, DatabaseTransactionConnection } from '../../../db/pool';
import { hasDeadLetter, resolveDeadLetter, upsertDeadLetter } from '../../../db/queries/events/dead-letters.queries';
import { claimReceipt } from '../../../db/queries/events/receipts.queries';
import { withTenant } from '../../../db/tenant';
import { rowsIn, type StatementRows } from '../../../db/tenant-reads';
import type { DecodedEvent } from '../envelope';
import {
  attemptUpTo, DeliveryAborted, errorText, receiptExpiry, screenMessage, type AttemptSettings, type GroupFilter, type Screening,
} from './delivery-rules';
import { ForwardedBatch } from './forwarded-batch';
import { TailFollower } from './tail-follower';
import type { FollowedTail } from './topic-tail';

/**
 * One consumer group's delivery pipeline (docs/reference/events.md, rules 15 and 16; docs/decisions/events.md, Consumer
 * groups), for both kinds of groups: the platform's own, run by the worker for every tenant, and a
 * tenant's gRPC Subscribe stream.
 *
 * Every message of the topic is screened (delivery-rules.ts screenMessage: tenant, redelivery
 * target, type; skipped messages still advance the offset), de-duplicated by event id through
 * `event_receipts` (money.* forever, others `dedupHours`), handed to the handler up to `maxAttempts`
 * times (pausing `retryBackoffMs`, doubling), and dead-lettered after the last failure
 * (`upsertDeadLetter`), after which the partition moves on. A dead letter's redelivery (header
 * `redeliverTo` = this group's Kafka id) is handled by this group only and resolves its dead letter.
 * Offsets are committed only after a delivery's outcome (receipt or dead letter) committed.
 *
 * Handlers come in two kinds (`DeliveryHandler`):
 * - `transactional`: `handle(delivery, tx)` runs in the tenant's transaction (withTenant, the
 *   application role, row-level security) that also claims the receipt, so the effect and the
 *   receipt commit together: every event takes effect exactly once. A throw rolls both back.
 * - `forwarding`: `handle(delivery)` has no transaction (a Subscribe stream writes to its client);
 *   the receipts of a fetched batch are read before its first event is forwarded and claimed for
 *   what was forwarded before its offsets are committed (forwarded-batch.ts), so an event is forwarded
 *   at least once and, outside a crash between the two, exactly once. A forwarding handler whose
 *   destination is gone throws `DeliveryAborted`: the message stays unhandled and uncommitted, and the
 *   consumer stops (the group's next member receives it).
 *
 * Receipts and dead letters are stored under the group's Kafka id (`kafkaGroupId`), which is also
 * the value a redelivery's `redeliverTo` header carries.
 */

/** What a handler receives: the event, where it was read, and whether it is a dead letter's redelivery. */
export interface Delivery {
  /** The envelope (common/event-envelope.ts), the partition key and the correlation id. */
  event: DecodedEvent;
  topic: string;
  partition: number;
  offset: string;
  /** The message carried `redeliverTo` naming this group: a retry of one of its dead letters. */
  redelivery: boolean;
  /** 1 on the first try, up to `maxAttempts`. */
  attempt: number;
  /**
   * A redelivery for a name the group adopts (GroupConsumerOptions.adopts): the handler delivers it
   * for that name alone. The group's own receipt is neither checked nor claimed (the group handled
   * the event before), and the handler resolves that name's dead letter itself.
   */
  adoptedFor?: string;
}

export interface TransactionalHandler {
  kind: 'transactional';
  /** Runs in the tenant's transaction that claims the receipt; throws to fail the attempt (both roll back). */
  handle: (delivery: Delivery, tx: DatabaseTransactionConnection) => Promise<void>;
}

export interface ForwardingHandler {
  kind: 'forwarding';
  /** Resolves once the event is delivered; throws to fail the attempt, or DeliveryAborted when the destination is gone. */
  handle: (delivery: Delivery) => Promise<void>;
}

export type DeliveryHandler = TransactionalHandler | ForwardingHandler;

export type ConsumerSettings = Pick<Config['consumers'], 'maxAttempts' | 'retryBackoffMs' | 'dedupHours' | 'dlqRetentionHours' | 'dlqQuarantineAfter'>;

export interface GroupConsumerOptions {
  kafka: Kafka;
  /** The application role: receipts, effects and dead letters are written in the event's tenant transaction. */
  db: DatabasePool;
  logger: Logger;
  /** The Kafka group id: `kafkaGroupId(group, tenantId)`. */
  groupId: string;
  /** A group reads one topic. */
  topic: string;
  /** A tenant subscription's tenant (only its events are delivered); null for a platform group (every tenant's). */
  tenantId: string | null;
  /** The event types the group receives; other types are skipped. */
  accepts: (type: string) => boolean;
  /** Names of dead letters the handler writes itself, whose redeliveries the group handles (delivery-rules.ts GroupFilter.adopts). */
  adopts?: (redeliverTo: string) => boolean;
  handler: DeliveryHandler;
  /** Where a group without committed offsets starts: the oldest retained event, or the next one published. */
  fromBeginning: boolean;
  settings: ConsumerSettings;
  /** Partitions handled at once (each in offset order); 1 unless given. */
  partitionsConcurrently?: number;
  /** Commit a partition's offset after this many messages (and at each batch's end); 100 unless given. */
  commitEvery?: number;
  /** How long a fetch waits for messages; 100 ms unless given. */
  maxWaitTimeInMs?: number;
  /**
   * How often a partition whose messages were all skipped (other tenants', other types) commits its
   * offset: at most once per this many milliseconds (common/message-consumer.ts PartitionBatches); every batch
   * unless given. A tenant's stream skips nearly every message of its topic.
   */
  skippedCommitIntervalMs?: number;
  /**
   * How long the group waits for a silent member (one that crashed) before handing its partitions to
   * the others; Kafka's 30 s unless given (the broker accepts 6 s to 5 min).
   */
  sessionTimeoutMs?: number;
  /**
   * A tenant stream's topic tail (topic-tail.ts): a partition whose fetched batch was handled to its
   * end follows the tail from there when the tail can serve it, and stops fetching it itself.
   */
  tail?: FollowedTail;
  /** How many of the tail's messages a followed partition may have waiting before it lets go (tail-follower.ts); 2 000 unless given. */
  tailMaxWaiting?: number;
  /**
   * A platform group whose handler acts for some tenants only (a module's subscriber: tenants with the
   * module installed): of a batch's tenants, those it serves. Asked once per fetched batch, after the
   * batch's events happened, so an event of a tenant left out is one the handler would do nothing with
   * (services/data/module-subscribers.ts); it is skipped without a transaction or a receipt. A dead letter's
   * redelivery is always handled (it resolves its dead letter).
   */
  tenantsServed?: (tenantIds: readonly string[]) => Promise<ReadonlySet<string>>;
  /**
   * How a forwarding group's receipt statements run (forwarded-batch.ts): through `db` unless given.
   * A gateway writes its streams' statements of one turn together (TenantReader.together).
   */
  forwardedStatements?: StatementRows;
  /** Tests replace the pause between attempts. */
  sleep?: (ms: number) => Promise<void>;
}

/** What a delivery came to; counted in `status()`. */
export type DeliveryOutcome = 'handled' | 'resolved' | 'duplicate' | 'dead-lettered' | 'left-dead-lettered' | 'skipped';

export type GroupConsumerStatus = Record<DeliveryOutcome, number>;

export const GROUP_CONSUMER_JOINED = 'consumer group member joined';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One fetched batch: each message's screening, and a forwarding group's receipts of its events. */
interface GroupBatch {
  screenings: Map<PartitionMessage, Screening>;
  forwarded: ForwardedBatch | null;
}

export class GroupConsumer {
  private consumer: Consumer | null = null;
  private stopping = false;
  private readonly counts: GroupConsumerStatus = { handled: 0, resolved: 0, duplicate: 0, 'dead-lettered': 0, 'left-dead-lettered': 0, skipped: 0 };
  private readonly filter: GroupFilter;
  private settle: (error: Error | null) => void = () => undefined;
  private readonly stopped: Promise<Error | null>;
  private readonly followers = new Map<number, TailFollower<GroupBatch>>();
  private readonly batches: PartitionBatches<GroupBatch>;

  constructor(private readonly options: GroupConsumerOptions) {
    this.filter = { groupId: options.groupId, tenantId: options.tenantId, accepts: options.accepts, adopts: options.adopts };
    this.stopped = new Promise((resolve) => { this.settle = resolve; });
    this.batches = new PartitionBatches({
      commitEvery: options.commitEvery ?? 100,
      skippedCommitIntervalMs: options.skippedCommitIntervalMs,
      openBatch: (messages) => this.openBatch(messages),
      handle: (message, batch) => this.deliver(message, batch),
      settleBatch: (batch) => this.settleBatch(batch),
    });
  }

  /** Joins the group and starts consuming; resolves once the consumer runs. */
  async start(): Promise<void> {
    const { kafka, logger, groupId, topic } = this.options;
    const consumer = createConsumer(kafka, {
      groupId, maxWaitTimeInMs: this.options.maxWaitTimeInMs ?? 100, allowAutoTopicCreation: false,
      ...(this.options.sessionTimeoutMs !== undefined && { sessionTimeout: this.options.sessionTimeoutMs }),
    });
    onGroupJoin(consumer, (assignment) => {
      logger.info({ groupId, assignment }, GROUP_CONSUMER_JOINED);
      // The partitions may have moved: each fetches for itself again from the member's offsets.
      void this.unfollowAll();
    });
    onCrash(consumer, (err, restart) => {
      logger.error({ err, groupId, restart }, restart ? 'consumer group member crashed; restarting' : 'consumer group member crashed for good');
      if (!restart) this.settle(err);
    });
    this.consumer = consumer;
    try {
      await consumer.connect();
      if (this.stopping) return await consumer.disconnect();
      await runMessageConsumer(consumer, {
        topic,
        fromBeginning: this.options.fromBeginning,
        partitionsConcurrently: this.options.partitionsConcurrently ?? 1,
        batches: this.batches,
        afterBatch: (partition, next, pause) => this.follow(partition, next, pause),
      });
      // Stopped while joining (a Subscribe cancelled at once): the stop's disconnect came before the run.
      if (this.stopping) await consumer.disconnect();
    } catch (error) {
      this.consumer = null;
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
  }

  /** Leaves the group after the delivery in hand, committing what it has handled. */
  async stop(): Promise<void> {
    this.stopping = true;
    const consumer = this.consumer;
    this.consumer = null;
    try {
      // The followers' batches in hand are finished and committed while the member is still in its group.
      await this.unfollowAll();
      await consumer?.disconnect();
    } finally {
      this.settle(null);
    }
  }

  /** Settles when the consumer stopped: null after stop(), the error of a crash the client does not recover from. */
  whenStopped(): Promise<Error | null> {
    return this.stopped;
  }

  status(): Readonly<GroupConsumerStatus> {
    return { ...this.counts };
  }

  /** The partitions read from the topic tail now, not fetched by the member itself. */
  followedPartitions(): number[] {
    return [...this.followers.keys()].sort((a, b) => a - b);
  }

  /** After a batch handled to its end: the partition follows the topic tail from `next` if the tail can serve it. */
  private follow(partition: number, next: string, pause: () => void): void {
    const { tail, tenantId, topic, logger } = this.options;
    const consumer = this.consumer;
    if (!tail || tenantId === null || !consumer || this.stopping || this.followers.has(partition)) return;
    const follower = TailFollower.start({
      tail, consumer, batches: this.batches, topic, partition, tenantId, from: next, logger, running: () => !this.stopping,
      maxWaiting: this.options.tailMaxWaiting,
    });
    if (!follower) return;
    pause();
    this.followers.set(partition, follower);
    void follower.ended.then(() => {
      if (this.followers.get(partition) === follower) this.followers.delete(partition);
    });
  }

  private async unfollowAll(): Promise<void> {
    await Promise.all([...this.followers.values()].map((follower) => follower.end()));
  }

  private async openBatch(messages: readonly PartitionMessage[]): Promise<GroupBatch> {
    const screenings = new Map(messages.map((message) => [message, screenMessage(message.message, this.filter)]));
    await this.screenTenants(screenings);
    if (this.options.handler.kind !== 'forwarding') return { screenings, forwarded: null };
    const events = [...screenings.values()].flatMap((screening) => (screening.kind === 'deliver' ? [screening.event.envelope] : []));
    const { db, groupId, settings, forwardedStatements } = this.options;
    return { screenings, forwarded: await ForwardedBatch.read(forwardedStatements ?? rowsIn(db), groupId, settings.dedupHours, events) };
  }

  /** Events of tenants the group does not serve (tenantsServed) are skipped; redeliveries are not. */
  private async screenTenants(screenings: Map<PartitionMessage, Screening>): Promise<void> {
    const { tenantsServed } = this.options;
    if (!tenantsServed) return;
    const screened = [...screenings].filter(([, screening]) => screening.kind === 'deliver' && !screening.redelivery);
    if (screened.length === 0) return;
    const tenantOf = (screening: Screening) => (screening.kind === 'deliver' ? screening.event.envelope.tenantId : '');
    const served = await tenantsServed([...new Set(screened.map(([, screening]) => tenantOf(screening)))]);
    for (const [message, screening] of screened) {
      if (!served.has(tenantOf(screening))) screenings.set(message, { kind: 'skip', reason: 'tenant-not-served' });
    }
  }

  /** Before the batch's offsets are committed: the receipts of what it forwarded. */
  private async settleBatch(batch: GroupBatch): Promise<void> {
    for (const outcome of await batch.forwarded?.settle() ?? []) this.counts[outcome] += 1;
  }

  /** One message: handled once its outcome is durable (or pending in its batch), skipped, or left to the group's next member. */
  private async deliver(message: PartitionMessage, batch: GroupBatch): Promise<MessageOutcome> {
    if (this.stopping) return 'left';
    const screening = batch.screenings.get(message)!;
    if (screening.kind === 'skip') {
      this.counts.skipped += 1;
      if (screening.reason === 'not-an-event') {
        this.options.logger.warn({ groupId: this.options.groupId, topic: message.topic, partition: message.partition, offset: message.message.offset, reason: screening.detail }, 'not an event; skipped');
      }
      return 'skipped';
    }
    const delivery: Delivery = {
      event: screening.event, topic: message.topic, partition: message.partition, offset: message.message.offset,
      redelivery: screening.redelivery, attempt: 1, ...(screening.adoptedFor !== undefined && { adoptedFor: screening.adoptedFor }),
    };
    const { handler } = this.options;
    const run = () => (handler.kind === 'transactional'
      ? this.inTransaction(handler, delivery, message)
      : this.forwarded(handler, delivery, message, batch.forwarded!));
    const { traceId, tenantId } = delivery.event.envelope;
    try {
      // What the handler writes (events, audit records) continues the trace of the event it handles.
      const outcome = traceId ? await runWithRequestContext({ traceId, tenantId }, run) : await run();
      if (outcome !== 'settle-later') this.counts[outcome] += 1;
      return 'handled';
    } catch (error) {
      if (!(error instanceof DeliveryAborted)) throw error;
      // Not awaited: stopping waits for this batch to end.
      this.stop().catch((err: unknown) => this.options.logger.error({ err, groupId: this.options.groupId }, 'consumer group member did not stop cleanly'));
      return 'left';
    }
  }

  private attemptSettings(message: PartitionMessage): AttemptSettings {
    return {
      maxAttempts: this.options.settings.maxAttempts,
      retryBackoffMs: this.options.settings.retryBackoffMs,
      sleep: this.options.sleep ?? sleep,
      beforePause: () => message.heartbeat(),
      shouldContinue: () => !this.stopping,
    };
  }

  private receiptOf(event: DecodedEvent) {
    const { tenantId, id, type } = event.envelope;
    return { tenantId, group: this.options.groupId, eventId: id, expiresAt: receiptExpiry(type, new Date(), this.options.settings.dedupHours) };
  }

  /** A redelivery that took effect (or had taken effect already) resolves its dead letter in the receipt's transaction. */
  private async resolved(tx: DatabaseTransactionConnection, delivery: Delivery): Promise<boolean> {
    if (!delivery.redelivery) return false;
    const { tenantId, id } = delivery.event.envelope;
    return (await resolveDeadLetter(tx, tenantId, this.options.groupId, id)) !== null;
  }

  private async inTransaction(handler: TransactionalHandler, delivery: Delivery, message: PartitionMessage): Promise<DeliveryOutcome> {
    const { db, groupId } = this.options;
    const { tenantId, id } = delivery.event.envelope;
    const result = await attemptUpTo((attempt) => withTenant(db, tenantId, async (tx): Promise<DeliveryOutcome> => {
      if (delivery.adoptedFor !== undefined) {
        await handler.handle({ ...delivery, attempt }, tx);
        return 'handled';
      }
      if (!delivery.redelivery && await hasDeadLetter(tx, tenantId, groupId, id)) return 'left-dead-lettered';
      if (!await claimReceipt(tx, this.receiptOf(delivery.event))) return await this.resolved(tx, delivery) ? 'resolved' : 'duplicate';
      await handler.handle({ ...delivery, attempt }, tx);
      return await this.resolved(tx, delivery) ? 'resolved' : 'handled';
    }), this.attemptSettings(message));
    if (result.ok) return result.value;
    await this.deadLetter(delivery, result.attempts, result.error);
    return 'dead-lettered';
  }

  private async forwarded(
    handler: ForwardingHandler, delivery: Delivery, message: PartitionMessage, batch: ForwardedBatch,
  ): Promise<DeliveryOutcome | 'settle-later'> {
    const { envelope } = delivery.event;
    const before = batch.before(envelope, delivery.redelivery);
    if (before !== 'forward') return before;
    const result = await attemptUpTo((attempt) => handler.handle({ ...delivery, attempt }), this.attemptSettings(message));
    if (!result.ok) {
      await this.deadLetter(delivery, result.attempts, result.error);
      batch.deadLettered(envelope);
      return 'dead-lettered';
    }
    batch.forwarded(envelope, delivery.redelivery);
    return 'settle-later';
  }

  /** The event failed every attempt: dead-lettered (again, for a redelivery), and the partition moves on. */
  private async deadLetter(delivery: Delivery, attempts: number, error: unknown): Promise<void> {
    const { db, groupId, settings, logger } = this.options;
    const { event, topic, partition, offset } = delivery;
    const { tenantId, id, type } = event.envelope;
    const letter = await withTenant(db, tenantId, (tx) => upsertDeadLetter(tx, {
      id: newId(), tenantId, consumerGroup: groupId, topic, partition, offset, eventKey: event.key, eventId: id, eventType: type,
      envelope: { ...event.envelope }, correlationId: event.correlationId, attemptCount: attempts, lastError: errorText(error),
      expiresAt: new Date(Date.now() + settings.dlqRetentionHours * 3_600_000).toISOString(), quarantineAfter: settings.dlqQuarantineAfter,
    }));
    logger.warn({
      err: error, groupId, tenantId, eventId: id, type, topic, partition, offset, attempts,
      deadLetterId: letter.id, timesDeadLettered: letter.timesDeadLettered, quarantined: letter.quarantined,
    }, 'event dead-lettered');
  }
}
