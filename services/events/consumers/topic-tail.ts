import { newId } from '../../../common/ids';
import { createConsumer, onCrash, onGroupJoin, type Consumer, type Kafka, type KafkaMessage } from '../../../common/kafka';
import type { Logger } from '../../../common/logger';
import { EVENT_HEADERS, headerValue } from '../envelope';

/**
 * The newest messages of one topic, fetched once per gateway and handed to the tenant streams that
 * follow them (docs/decisions/events.md, One fetcher per topic). Every Subscribe stream is a member
 * of its tenant's Kafka group, but fifty streams on one topic each fetching and decoding the whole
 * topic to keep one tenant's events in fifty cost the gateway and the broker fifty times the topic.
 * A stream that has caught up stops fetching its partition and follows the tail instead
 * (tail-follower.ts): it receives its tenant's messages, plus how far the tail has read so it can
 * commit past the others'. The tail keeps the last `bufferSize` messages of each partition so a
 * stream whose own fetch ends anywhere in them can switch without a gap or a repeat.
 *
 * The tail's own Kafka group (`events-tail.<uuid>`) is private to it and commits nothing: it reads
 * from the newest message when it starts. Whenever its reading may have jumped (it rejoined its
 * group, or crashed), its followers are let go (`lost`) and fetch for themselves again from where
 * they are.
 */

/** What a follower receives: its tenant's messages of one fetched batch, and the offset of the batch's last message. */
export interface TailBatch {
  partition: number;
  messages: readonly KafkaMessage[];
  lastOffset: string;
}

export interface TailListener {
  tenantId: string;
  receive: (batch: TailBatch) => void;
  /** The tail cannot go on for this follower (it restarted, crashed or stopped). */
  lost: () => void;
}

interface PartitionTail {
  /** The latest messages read, in offset order. */
  buffer: KafkaMessage[];
  listeners: Set<TailListener>;
}

/** What a follower needs of a tail (TopicTail.follow). */
export interface FollowedTail {
  follow(partition: number, from: string, listener: TailListener): (() => void) | null;
}

export const TAIL_BUFFER_MESSAGES = 2000;

export class TopicTail implements FollowedTail {
  private readonly partitions = new Map<number, PartitionTail>();
  private consumer: Consumer | null = null;
  private joined = false;
  private stopped = false;

  constructor(
    private readonly kafka: Kafka,
    readonly topic: string,
    private readonly logger: Logger,
    private readonly bufferSize = TAIL_BUFFER_MESSAGES,
  ) {}

  /** Joins the tail's own group and starts reading the newest messages; `crashed` hears a crash the client does not recover from. */
  async start(crashed: (error: Error) => void): Promise<void> {
    const groupId = `events-tail.${newId()}`;
    const consumer = createConsumer(this.kafka, { groupId, maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
    this.consumer = consumer;
    onGroupJoin(consumer, () => {
      // A rejoin reads from the newest message again: what lies between is not in the buffers.
      if (this.joined) this.loseAll();
      this.joined = true;
    });
    onCrash(consumer, (err, restart) => {
      this.logger.error({ err, topic: this.topic, restart }, 'topic tail crashed');
      this.loseAll();
      if (!restart) crashed(err);
    });
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [this.topic], fromBeginning: false });
      await consumer.run({
        autoCommit: false,
        eachBatch: ({ batch }) => {
          this.received(batch.partition, batch.messages);
          return Promise.resolve();
        },
      });
    } catch (error) {
      this.consumer = null;
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
  }

  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = null;
    this.stopped = true;
    this.loseAll();
    await consumer?.disconnect();
  }

  /**
   * Follows the partition for one tenant from `from` (the next offset the follower reads): its
   * tenant's buffered messages from there are handed over at once, later ones as they are read.
   * Null when the buffer does not reach back to `from` or the tail has not read that far yet; the
   * function returned stops following.
   */
  follow(partition: number, from: string, listener: TailListener): (() => void) | null {
    const tail = this.stopped ? undefined : this.partitions.get(partition);
    const first = tail?.buffer[0];
    const last = tail?.buffer.at(-1);
    if (!tail || !first || !last) return null;
    const start = BigInt(from);
    if (start < BigInt(first.offset) || start > BigInt(last.offset) + 1n) return null;
    const missed = tail.buffer.filter((message) => BigInt(message.offset) >= start);
    if (missed.length > 0) listener.receive({ partition, messages: missed.filter(ofTenant(listener.tenantId)), lastOffset: last.offset });
    tail.listeners.add(listener);
    return () => { tail.listeners.delete(listener); };
  }

  /** How many followers the tail has, over all partitions. */
  followers(): number {
    return [...this.partitions.values()].reduce((sum, tail) => sum + tail.listeners.size, 0);
  }

  /** One fetched batch: buffered, and each follower of the partition handed its tenant's messages of it. */
  received(partition: number, messages: readonly KafkaMessage[]): void {
    const last = messages.at(-1);
    // A batch that arrives while the tail stops has nobody to go to.
    if (!last || this.stopped) return;
    const tail = this.partitions.get(partition) ?? { buffer: [], listeners: new Set<TailListener>() };
    this.partitions.set(partition, tail);
    tail.buffer.push(...messages);
    // Trimmed in steps, not per message: a splice copies what stays.
    if (tail.buffer.length > 2 * this.bufferSize) tail.buffer.splice(0, tail.buffer.length - this.bufferSize);
    if (tail.listeners.size === 0) return;
    const byTenant = new Map<string | undefined, KafkaMessage[]>();
    for (const message of messages) {
      const tenantId = headerValue(message, EVENT_HEADERS.tenantId);
      const ofOne = byTenant.get(tenantId);
      if (ofOne) ofOne.push(message);
      else byTenant.set(tenantId, [message]);
    }
    // A message without the tenant header goes to every follower, whose screening decodes it (delivery-rules.ts).
    const untagged = byTenant.get(undefined) ?? [];
    for (const listener of [...tail.listeners]) {
      const own = byTenant.get(listener.tenantId) ?? [];
      const handed = untagged.length === 0 ? own : [...own, ...untagged].sort((a, b) => (BigInt(a.offset) < BigInt(b.offset) ? -1 : 1));
      listener.receive({ partition, messages: handed, lastOffset: last.offset });
    }
  }

  private loseAll(): void {
    for (const tail of this.partitions.values()) {
      const listeners = [...tail.listeners];
      tail.listeners.clear();
      tail.buffer = [];
      for (const listener of listeners) listener.lost();
    }
  }
}

const ofTenant = (tenantId: string) => (message: KafkaMessage): boolean => {
  const tenant = headerValue(message, EVENT_HEADERS.tenantId);
  return tenant === undefined || tenant === tenantId;
};

/**
 * The gateway's tails, one per topic, started when a stream first asks for one and dropped if it
 * cannot start or crashes for good (the next stream starts another).
 */
export class TopicTails {
  private readonly tails = new Map<string, TopicTail>();
  private stopping = false;

  constructor(private readonly kafka: Kafka, private readonly logger: Logger) {}

  /** The topic's tail for a stream: whichever tail runs for the topic when the stream asks to follow. */
  tailOf(topic: string): FollowedTail {
    // Started with the stream, so it has read a little by the time the stream has caught up.
    this.of(topic);
    return { follow: (partition, from, listener) => this.of(topic).follow(partition, from, listener) };
  }

  private of(topic: string): TopicTail {
    const running = this.tails.get(topic);
    if (running) return running;
    const tail = new TopicTail(this.kafka, topic, this.logger);
    // A gateway that is stopping starts no tail: this one is never started, so nobody can follow it.
    if (this.stopping) return tail;
    this.tails.set(topic, tail);
    const drop = (err: unknown) => {
      if (this.tails.get(topic) === tail) this.tails.delete(topic);
      this.logger.warn({ err, topic }, 'topic tail stopped; streams fetch for themselves');
    };
    tail.start(drop).catch(drop);
    return tail;
  }

  /** How many stream partitions follow each running tail (/metrics). */
  followersByTopic(): Array<{ topic: string; followers: number }> {
    return [...this.tails].map(([topic, tail]) => ({ topic, followers: tail.followers() }));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const tails = [...this.tails.values()];
    this.tails.clear();
    await Promise.all(tails.map((tail) => tail.stop().catch(() => undefined)));
  }
}
