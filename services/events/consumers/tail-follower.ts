import type { Consumer } from '../../../common/kafka';
import type { Logger } from '../../../common/logger';
import { nextOffset, type MessageBatch, type PartitionBatches } from '../../../common/message-consumer';
import type { FollowedTail, TailBatch } from './topic-tail';

export interface TailFollowerOptions<B> {
  tail: FollowedTail;
  /** The member whose partition is followed: it commits the partition's offsets, and fetches it again when following ends. */
  consumer: Consumer;
  /** The member's batch handling, the same its own fetch goes through. */
  batches: PartitionBatches<B>;
  topic: string;
  partition: number;
  tenantId: string;
  /** The next offset the member reads on the partition. */
  from: string;
  /** False once the member is stopping. */
  running: () => boolean;
  logger: Logger;
  /** A follower that has this many messages waiting (its stream is slower than the topic) lets go and fetches for itself. */
  maxWaiting?: number;
}

const MAX_WAITING_MESSAGES = 2000;

/**
 * One partition of a tenant stream's group member, read from the gateway's topic tail instead of
 * the member's own fetch (topic-tail.ts). The member has paused the partition in its consumer; the
 * follower hands the tail's batches (the tenant's messages, and the offset read up to) to the same
 * batch handling as the member's fetch, in order, and commits through the member's consumer. When it
 * ends (`end`, or by itself: the tail lost it, its stream fell too far behind, a batch failed) the
 * member seeks the partition to the follower's next offset and fetches it again itself; a follower
 * ended because the member is stopping leaves the partition to the member's leaving.
 */
export class TailFollower<B> {
  private waiting: TailBatch[] = [];
  private waitingMessages = 0;
  private next: string;
  private unfollow: (() => void) | null = null;
  private following = true;
  private draining: Promise<void> = Promise.resolve();
  private ending: Promise<void> | null = null;
  private settleEnded: () => void = () => undefined;
  /** Settles once the follower has ended and the member fetches the partition again (or is stopping). */
  readonly ended: Promise<void>;

  private constructor(private readonly options: TailFollowerOptions<B>) {
    this.next = options.from;
    this.ended = new Promise((resolve) => { this.settleEnded = resolve; });
  }

  /** Follows the tail from the member's next offset; null when the tail cannot serve it from there (yet). */
  static start<B>(options: TailFollowerOptions<B>): TailFollower<B> | null {
    const follower = new TailFollower(options);
    const unfollow = options.tail.follow(options.partition, options.from, {
      tenantId: options.tenantId,
      receive: (batch) => follower.received(batch),
      lost: () => { void follower.end(); },
    });
    if (!unfollow) return null;
    // What the tail handed over at once may have ended it already (more than maxWaiting): leave the tail now.
    if (follower.following) follower.unfollow = unfollow;
    else unfollow();
    return follower;
  }

  /** Stops following: the batch in hand is finished, the rest dropped, and the member fetches the partition from the next offset. */
  end(): Promise<void> {
    this.ending ??= (async () => {
      this.stopFollowing();
      await this.draining;
      this.refetch();
    })();
    return this.ending;
  }

  private received(batch: TailBatch): void {
    if (!this.following) return;
    this.waiting.push(batch);
    this.waitingMessages += batch.messages.length;
    if (this.waitingMessages > (this.options.maxWaiting ?? MAX_WAITING_MESSAGES)) {
      this.options.logger.info({ topic: this.options.topic, partition: this.options.partition, tenantId: this.options.tenantId }, 'stream fell behind the topic tail; it fetches for itself');
      void this.end();
      return;
    }
    if (this.waiting.length === 1) this.draining = this.drain();
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0 && this.following) {
      // What arrived while the last batch was handled is handled as one: a busy stream reads its
      // receipts and commits once for many events rather than once per fetch of the tail.
      const batch = merged(this.waiting);
      let whole: boolean;
      try {
        whole = await this.options.batches.handle(this.messageBatch(batch));
      } catch (err) {
        this.options.logger.warn({ err, topic: this.options.topic, partition: this.options.partition }, 'a batch from the topic tail failed; the stream fetches it again itself');
        this.finish(true);
        return;
      }
      // Ended meanwhile: stopFollowing has emptied the queue already.
      if (this.following) {
        this.waiting.splice(0, batch.batches);
        this.waitingMessages -= batch.messages.length;
      }
      if (!whole) {
        // The member is stopping: its leaving commits and hands the partition over.
        this.finish(false);
        return;
      }
      this.next = nextOffset(batch.lastOffset);
    }
  }

  private messageBatch(batch: TailBatch): MessageBatch {
    const { consumer, topic, partition, running } = this.options;
    return {
      topic,
      partition,
      messages: batch.messages,
      lastOffset: batch.lastOffset,
      isRunning: running,
      // A rebalance ends the member's followers (group-consumer.ts); the batch in hand is finished first.
      isStale: () => false,
      // The member heartbeats by itself while its partitions are paused (its fetch returns nothing).
      heartbeat: () => Promise.resolve(),
      // The member's fetch position of a paused partition is set when it resumes (refetch).
      resolveOffset: () => undefined,
      commitOffset: (offset) => consumer.commitOffsets([{ topic, partition, offset }]),
    };
  }

  /** Ends from inside the drain, which `end` would wait for. */
  private finish(refetch: boolean): void {
    this.stopFollowing();
    this.ending ??= Promise.resolve().then(() => (refetch ? this.refetch() : this.settleEnded()));
  }

  private stopFollowing(): void {
    this.following = false;
    this.unfollow?.();
    this.unfollow = null;
    this.waiting = [];
    this.waitingMessages = 0;
  }

  /** The member reads the partition itself again, from the first offset the follower did not handle. */
  private refetch(): void {
    const { consumer, topic, partition } = this.options;
    if (this.options.running()) {
      try {
        consumer.seek({ topic, partition, offset: this.next });
        consumer.resume([{ topic, partitions: [partition] }]);
      } catch (err) {
        this.options.logger.warn({ err, topic, partition }, 'could not resume fetching a partition after the topic tail');
      }
    }
    this.settleEnded();
  }
}

/** Consecutive batches of one partition as one, and how many they were. */
function merged(batches: readonly TailBatch[]): TailBatch & { batches: number } {
  if (batches.length === 1) return { ...batches[0], batches: 1 };
  return { partition: batches[0].partition, messages: batches.flatMap((batch) => batch.messages), lastOffset: batches.at(-1)!.lastOffset, batches: batches.length };
}
