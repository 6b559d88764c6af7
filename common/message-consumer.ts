import { runBatchConsumer, type BatchConsumerPlacement, type Consumer, type KafkaMessage } from './kafka';

/** One message of a partition, with the means to tell the group the member is alive during long work. */
export interface PartitionMessage {
  topic: string;
  partition: number;
  message: KafkaMessage;
  heartbeat: () => Promise<void>;
}

/** What `handle` did with a message (BatchHandling). */
export type MessageOutcome = 'handled' | 'skipped' | 'left';

/**
 * Some messages of one partition in offset order, as the member's own fetch hands them over or a
 * fetcher the member shares with others (services/events/consumers/topic-tail.ts), with what the
 * member can do about them.
 */
export interface MessageBatch {
  topic: string;
  partition: number;
  messages: readonly KafkaMessage[];
  /** The offset of the last message read: the last of `messages`, or a later one filtered out before it came here. */
  lastOffset: string;
  /** False once the member is stopping. */
  isRunning(): boolean;
  /** True once the partition may belong to another member (after a rebalance). */
  isStale(): boolean;
  heartbeat(): Promise<void>;
  /** Tells the member's own fetch that the offset was handled. */
  resolveOffset(offset: string): void;
  /** Commits the partition's offset: the next one to read. */
  commitOffset(offset: string): Promise<void>;
}

export interface BatchHandling<B> {
  /** A partition's offset is committed after this many handled messages, and when its batch ends. */
  commitEvery: number;
  /**
   * A batch whose messages were all skipped (none handled since the partition's last commit) commits
   * its offset only if this many milliseconds passed since that commit, or the member is leaving as
   * the batch ends; 0 (the default) commits every batch. Skipped messages leave nothing to redo: a
   * member that takes the partition over reads them again and skips them again.
   */
  skippedCommitIntervalMs?: number;
  /** What the handling of one batch shares (what it reads for all its messages at once): made before its first message. */
  openBatch: (messages: readonly PartitionMessage[]) => Promise<B>;
  /**
   * Handles one message and resolves once its outcome is durable or pending in the batch ('handled'),
   * or at once when it is not the consumer's to handle ('skipped'); 'left' leaves it, and the rest of
   * its batch, unhandled and uncommitted (the caller is stopping).
   */
  handle: (message: PartitionMessage, batch: B) => Promise<MessageOutcome>;
  /** Makes durable what `handle` left pending in the batch; runs before each commit of its offsets and when the batch ends. */
  settleBatch: (batch: B) => Promise<void>;
}

/** The offset after `offset`: what a partition's commit names (the next one to read). */
export const nextOffset = (offset: string): string => (BigInt(offset) + 1n).toString();

/**
 * Handles a member's batches one message at a time, in offset order per partition: a message's
 * offset is resolved only after `handle` resolved, and committed with the next commit (every
 * `commitEvery` messages and at the end of the batch), after `settleBatch`. A member that stops or
 * loses the partition leaves the rest of the batch at once; a crash hands the uncommitted messages to
 * the next member again, so `handle` must recognise what it has done already (consumer groups do by
 * event id).
 */
export class PartitionBatches<B> {
  /** When each partition's offset was last committed (ms since the epoch). */
  private readonly committedAt = new Map<number, number>();

  constructor(private readonly handling: BatchHandling<B>) {}

  /** Handles the batch; resolves true when all of it was handled and the partition is still the member's. */
  async handle(batch: MessageBatch): Promise<boolean> {
    const { commitEvery, openBatch, handle, settleBatch, skippedCommitIntervalMs = 0 } = this.handling;
    const heartbeat = () => batch.heartbeat();
    const messages = batch.messages.map((message): PartitionMessage => ({ topic: batch.topic, partition: batch.partition, message, heartbeat }));
    // A shared fetcher's batch may hold none of the member's messages: nothing to open or settle.
    const shared = messages.length > 0 ? { batch: await openBatch(messages) } : null;
    const settle = async () => { if (shared) await settleBatch(shared.batch); };
    // The last offset resolved and not committed yet, and how many messages were handled since the last commit.
    let resolved: string | null = null;
    let sinceCommit = 0;
    const commit = async () => {
      if (resolved === null) return;
      await settle();
      const offset = nextOffset(resolved);
      resolved = null;
      sinceCommit = 0;
      this.committedAt.set(batch.partition, Date.now());
      await batch.commitOffset(offset);
    };
    let whole = true;
    for (const message of messages) {
      // After a rebalance the partition may belong to another member: leave the rest to it.
      const outcome = batch.isRunning() && !batch.isStale() ? await handle(message, shared!.batch) : 'left';
      if (outcome === 'left') {
        whole = false;
        break;
      }
      batch.resolveOffset(message.message.offset);
      resolved = message.message.offset;
      if (outcome === 'skipped') continue;
      sinceCommit += 1;
      if (sinceCommit >= commitEvery) await commit();
      await heartbeat();
    }
    // What the fetcher filtered out after the member's last message is passed over as well.
    if (whole && resolved !== batch.lastOffset && !batch.isStale()) {
      batch.resolveOffset(batch.lastOffset);
      resolved = batch.lastOffset;
    }
    // A stale partition's commit would be refused; its next owner reads from the last commit (what
    // was handled is still settled, so the owner recognises it).
    if (batch.isStale()) await settle();
    else if (sinceCommit > 0 || !batch.isRunning() || Date.now() - (this.committedAt.get(batch.partition) ?? 0) >= skippedCommitIntervalMs) await commit();
    return whole && batch.isRunning() && !batch.isStale();
  }
}

export interface MessageConsumerOptions<B> extends BatchConsumerPlacement {
  batches: PartitionBatches<B>;
  /**
   * Called after a batch was handled to its end, before the partition's next fetch, with the offset
   * to read next; `pause` stops fetching the partition (until the consumer resumes it).
   */
  afterBatch?: (partition: number, next: string, pause: () => void) => void;
}

/**
 * Consumes a topic through `batches` (PartitionBatches: one message at a time, in offset order per
 * partition, committed after handling). Resolves once the consumer runs.
 */
export async function runMessageConsumer<B>(consumer: Consumer, options: MessageConsumerOptions<B>): Promise<void> {
  const { batches, afterBatch } = options;
  await runBatchConsumer(consumer, options, async (run) => {
    const { batch } = run;
    const last = batch.messages.at(-1);
    if (!last) return;
    const whole = await batches.handle({
      topic: batch.topic,
      partition: batch.partition,
      messages: batch.messages,
      lastOffset: last.offset,
      isRunning: () => run.isRunning(),
      isStale: () => run.isStale(),
      heartbeat: () => run.heartbeat(),
      resolveOffset: (offset) => run.resolveOffset(offset),
      // Through the batch, not the consumer: the consumer drops commits once it is stopping, and a
      // member that leaves should hand over what it has handled.
      commitOffset: (offset) => run.commitOffsetsIfNecessary({ topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset }] }] }),
    });
    if (whole) afterBatch?.(batch.partition, nextOffset(last.offset), () => { run.pause(); });
  });
}
