import { KafkaJSDeleteGroupsError, type Admin, type Kafka } from 'kafkajs';

/**
 * Consumer groups' offsets through the Kafka admin: where a group stands on a topic, where the
 * topic ends, which offsets a moment in time corresponds to, moving a group, deleting one. The
 * other half of common/kafka.ts (kept apart for its size): every Kafka call of the platform goes
 * through these two modules, so the client library can be replaced without touching the domains.
 * Offsets are bigints: they are Kafka's int64, and sums over partitions must not lose digits.
 */

/** One partition's offset: for a group, the next offset it will read (its committed offset). */
export interface PartitionOffset {
  partition: number;
  offset: bigint;
}

/** One partition's bounds: the first offset still stored and the high watermark (the next offset to be written). */
export interface PartitionBounds {
  partition: number;
  low: bigint;
  high: bigint;
}

/**
 * The group's committed offsets on the topic, one per partition that has one (a partition the
 * group never committed on is left out, so an empty answer means the group has never read it).
 */
export async function committedOffsets(admin: Admin, groupId: string, topic: string): Promise<PartitionOffset[]> {
  const answer = await admin.fetchOffsets({ groupId, topics: [topic] });
  return answer.flatMap((entry) => entry.partitions)
    .filter(({ offset }) => BigInt(offset) >= 0n)
    .map(({ partition, offset }) => ({ partition, offset: BigInt(offset) }))
    .sort((a, b) => a.partition - b.partition);
}

/** The topics on which the group has committed offsets. */
export async function committedTopics(admin: Admin, groupId: string): Promise<string[]> {
  const answer = await admin.fetchOffsets({ groupId });
  return answer.filter((entry) => entry.partitions.some(({ offset }) => BigInt(offset) >= 0n)).map((entry) => entry.topic);
}

/** Each partition's low and high watermark. */
export async function topicBounds(admin: Admin, topic: string): Promise<PartitionBounds[]> {
  const answer = await admin.fetchTopicOffsets(topic);
  return answer.map(({ partition, low, high }) => ({ partition, low: BigInt(low), high: BigInt(high) }))
    .sort((a, b) => a.partition - b.partition);
}

/**
 * Per partition, the first offset whose message was written at or after `timestampMs`; the high
 * watermark where no message is that recent (reading from there reads only what comes next).
 */
export async function offsetsAtTime(admin: Admin, topic: string, timestampMs: number): Promise<PartitionOffset[]> {
  const answer = await admin.fetchTopicOffsetsByTimestamp(topic, timestampMs);
  return answer.map(({ partition, offset }) => ({ partition, offset: BigInt(offset) })).sort((a, b) => a.partition - b.partition);
}

/** The group's state as its coordinator reports it (Empty, Stable, PreparingRebalance, Dead …) and how many members it has. */
export async function describeGroup(admin: Admin, groupId: string): Promise<{ state: string; members: number }> {
  const { groups } = await admin.describeGroups([groupId]);
  const group = groups.find((entry) => entry.groupId === groupId);
  return { state: group?.state ?? 'Dead', members: group?.members.length ?? 0 };
}

export class GroupNotEmptyError extends Error {
  override name = 'GroupNotEmptyError';
}

/**
 * Commits the given offsets for a group that has no member: the next member to join reads from
 * them. kafkajs's admin setOffsets does the same by joining the group with a consumer that seeks
 * and stops at its first fetch; this does it with a fetch wait of 50 ms instead of kafkajs's 5 s,
 * because a Subscribe waits for it. A group with members is refused (GroupNotEmptyError): Kafka
 * keeps the offsets of a running group to its members.
 */
export async function setGroupOffsets(kafka: Kafka, groupId: string, topic: string, offsets: readonly PartitionOffset[]): Promise<void> {
  if (offsets.length === 0) return;
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 50, allowAutoTopicCreation: false, retry: { retries: 2 } });
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const { state } = await consumer.describeGroup();
    if (!['Empty', 'Dead'].includes(state)) throw new GroupNotEmptyError(`The consumer group ${groupId} has running members (state ${state})`);
    await new Promise<void>((resolve, reject) => {
      // With the default autoCommit a seek is committed as soon as the partition is assigned,
      // before the first fetch; the fetch event therefore says every seek has been committed.
      consumer.on(consumer.events.FETCH, () => { consumer.stop().then(resolve, reject); });
      consumer.run({ eachBatchAutoResolve: false, eachBatch: () => Promise.resolve() }).catch(reject);
      consumer.pause([{ topic }]);
      for (const { partition, offset } of offsets) consumer.seek({ topic, partition, offset: offset.toString() });
    });
  } finally {
    await consumer.disconnect().catch(() => undefined);
  }
}

/**
 * Deletes the group and its committed offsets. A group that does not exist is no error; one that
 * still has members is GroupNotEmptyError (Kafka deletes only empty groups).
 */
export async function deleteGroup(admin: Admin, groupId: string): Promise<void> {
  try {
    await admin.deleteGroups([groupId]);
  } catch (error) {
    const failures = error instanceof KafkaJSDeleteGroupsError ? error.groups : [];
    const types = failures.map((failure) => (failure.error as { type?: string } | undefined)?.type);
    if (failures.length > 0 && types.every((type) => type === 'GROUP_ID_NOT_FOUND')) return;
    if (types.includes('NON_EMPTY_GROUP')) throw new GroupNotEmptyError(`The consumer group ${groupId} still has members`, { cause: error });
    throw error;
  }
}
