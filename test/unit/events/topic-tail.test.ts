import pino from 'pino';
import { createKafka, type KafkaMessage } from '../../../common/kafka';
import { EVENT_HEADERS } from '../../../services/events/envelope';
import { TopicTail, type TailBatch, type TailListener } from '../../../services/events/consumers/topic-tail';

/**
 * The topic tail's buffer and hand-out (services/events/consumers/topic-tail.ts), without a broker:
 * batches are given to `received` as the tail's consumer would.
 */

const A = '01968f1e-7a7b-7cc3-a5a8-0d6f3f1e2a12';
const B = '01968f1e-7a7b-7cc3-a5a8-0d6f3f1e2a99';

const message = (offset: number, tenantId?: string): KafkaMessage => ({
  offset: String(offset), key: null, value: Buffer.from('{}'), timestamp: '0', attributes: 0,
  headers: tenantId ? { [EVENT_HEADERS.tenantId]: Buffer.from(tenantId) } : {},
});

/** A tail that never connects: the client is only used by start(). */
const tail = (bufferSize = 4) => new TopicTail(createKafka({ brokers: ['127.0.0.1:1'], clientId: 'unit', ssl: false, sasl: {} }), 'test.topic', pino({ level: 'silent' }), bufferSize);

const listener = (tenantId: string): TailListener & { batches: TailBatch[]; lostCount: number } => {
  const batches: TailBatch[] = [];
  const self = { tenantId, batches, lostCount: 0, receive: (batch: TailBatch) => { batches.push(batch); }, lost: () => { self.lostCount += 1; } };
  return self;
};

const offsets = (batch: TailBatch) => batch.messages.map((m) => Number(m.offset));

describe('TopicTail.follow', () => {
  it('is refused before the partition has been read, and for an offset before the buffer or beyond what was read', () => {
    const subject = tail();
    expect(subject.follow(0, '0', listener(A))).toBeNull();
    subject.received(0, [message(10, A), message(11, B)]);
    expect(subject.follow(0, '9', listener(A))).toBeNull();
    expect(subject.follow(0, '13', listener(A))).toBeNull();
    expect(subject.follow(1, '10', listener(A))).toBeNull();
  });

  it('hands over the tenant’s buffered messages from the offset at once, with the offset read up to', () => {
    const subject = tail();
    subject.received(0, [message(10, A), message(11, B), message(12, A), message(13, B)]);
    const follower = listener(A);
    expect(subject.follow(0, '11', follower)).not.toBeNull();
    expect(follower.batches).toHaveLength(1);
    expect(offsets(follower.batches[0])).toEqual([12]);
    expect(follower.batches[0].lastOffset).toBe('13');
  });

  it('hands over nothing at once to a follower that has read everything, and every later batch', () => {
    const subject = tail();
    subject.received(0, [message(10, A)]);
    const follower = listener(A);
    subject.follow(0, '11', follower);
    expect(follower.batches).toEqual([]);
    subject.received(0, [message(11, B), message(12, B)]);
    subject.received(0, [message(13, A), message(14, B)]);
    // A batch of other tenants' messages only still tells how far the tail has read.
    expect(follower.batches.map((batch) => [offsets(batch), batch.lastOffset])).toEqual([[[], '12'], [[13], '14']]);
  });
});

describe('TopicTail.received', () => {
  it('gives each follower its own tenant’s messages and every message without a tenant header, in offset order', () => {
    const subject = tail();
    subject.received(0, [message(0)]);
    const [a, b] = [listener(A), listener(B)];
    subject.follow(0, '1', a);
    subject.follow(0, '1', b);
    subject.received(0, [message(1, A), message(2), message(3, B), message(4, A)]);
    expect(offsets(a.batches[0])).toEqual([1, 2, 4]);
    expect(offsets(b.batches[0])).toEqual([2, 3]);
  });

  it('keeps the latest messages only, trimmed once twice the buffer is held', () => {
    const subject = tail(2);
    subject.received(0, [message(0, A), message(1, A), message(2, A), message(3, A)]);
    expect(subject.follow(0, '0', listener(A))).not.toBeNull();
    subject.received(0, [message(4, A)]);
    expect(subject.follow(0, '2', listener(A))).toBeNull();
    expect(subject.follow(0, '3', listener(A))).not.toBeNull();
  });

  it('stops handing batches to a follower that unfollowed', () => {
    const subject = tail();
    subject.received(0, [message(0, A)]);
    const follower = listener(A);
    const unfollow = subject.follow(0, '1', follower)!;
    unfollow();
    subject.received(0, [message(1, A)]);
    expect(follower.batches).toEqual([]);
    expect(subject.followers()).toBe(0);
  });
});

describe('TopicTail.stop', () => {
  it('lets every follower go, and nobody follows it afterwards', async () => {
    const subject = tail();
    subject.received(0, [message(0, A)]);
    subject.received(1, [message(0, B)]);
    const [a, b] = [listener(A), listener(B)];
    subject.follow(0, '1', a);
    subject.follow(1, '1', b);
    await subject.stop();
    expect([a.lostCount, b.lostCount]).toEqual([1, 1]);
    subject.received(0, [message(1, A)]);
    expect(subject.follow(0, '1', listener(A))).toBeNull();
    expect(a.batches).toEqual([]);
  });
});
