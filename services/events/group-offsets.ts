import type { Admin, Kafka } from '../../common/kafka';
import {
  committedOffsets, committedTopics, deleteGroup, GroupNotEmptyError, offsetsAtTime, setGroupOffsets, topicBounds,
  type PartitionBounds, type PartitionOffset,
} from '../../common/kafka-groups';
import { isProblem, problems } from '../../common/problems';
import type { TenantGroup } from './subscription-rules';
import { retentionHours } from './topics';

/**
 * Where a tenant's consumer group stands on its topic, and moving it (docs/reference/events.md, rules
 * 20 to 22: ReplayFrom, GetConsumerPosition, Unsubscribe). Every answer comes from the Kafka admin:
 * offsets live in Kafka, not in a table of ours. A group reads one topic (docs/decisions/events.md, gRPC consumer-group
 * RPCs): the RPCs name a topic and a group, and Kafka deletes or moves a group as a whole.
 */

export interface GroupAdmin {
  /** An admin client with retries of its own (the gateway's health admin has none). */
  admin: Admin;
  /** The client whose short-lived consumers commit offsets for a group without members (setGroupOffsets). */
  kafka: Kafka;
}

export interface GroupPosition {
  /** Σ committed offsets (current_offset, docs/reference/events.md#rule-21). */
  current: bigint;
  /** Σ high watermarks (latest_offset). */
  latest: bigint;
  /** latest − current: every message of the topic not yet passed, other tenants' included (they are skipped, not received). */
  lag: bigint;
}

/**
 * Runs admin work: connected first (a no-op while connected; it reconnects after the broker came
 * back). A broker that does not answer is the caller's UNAVAILABLE; a problem thrown on the way stays itself.
 */
async function broker<T>({ admin }: GroupAdmin, work: () => Promise<T>): Promise<T> {
  try {
    await admin.connect();
    return await work();
  } catch (error) {
    if (isProblem(error)) throw error;
    throw problems.unavailable('The event broker did not answer; retry with backoff', error);
  }
}

/**
 * The position of a group that has committed on the topic, from its committed offsets and the
 * topic's high watermarks; a partition the group has no offset on (one added to the topic since)
 * counts at its high watermark, where the group would start reading it. Null for a group that has
 * never committed on the topic.
 */
export function positionOf(committed: readonly PartitionOffset[], bounds: readonly PartitionBounds[]): GroupPosition | null {
  if (committed.length === 0) return null;
  const byPartition = new Map(committed.map(({ partition, offset }) => [partition, offset]));
  let current = 0n;
  let latest = 0n;
  let lag = 0n;
  for (const { partition, high } of bounds) {
    const offset = byPartition.get(partition) ?? high;
    current += offset;
    latest += high;
    if (high > offset) lag += high - offset;
  }
  return { current, latest, lag };
}

export async function groupPosition(groups: GroupAdmin, target: TenantGroup): Promise<GroupPosition> {
  const { admin } = groups;
  const position = await broker(groups, async () => positionOf(await committedOffsets(admin, target.groupId, target.topic), await topicBounds(admin, target.topic)));
  if (!position) throw problems.notFound(`consumer group ${target.group} on ${target.topic}`);
  return position;
}

/**
 * Before a group's first stream starts: a group that has never committed on the topic gets the
 * topic's current end as its offsets, so it reads what is published from now on (not 7 days of
 * history) and exists for GetConsumerPosition and ReplayFrom from its first Subscribe, before any
 * event reached it. A group that reads another topic is refused (FAILED_PRECONDITION): one Kafka
 * group id serves one topic, since Unsubscribe and ReplayFrom move the group as a whole.
 */
export async function prepareGroup(groups: GroupAdmin, target: TenantGroup): Promise<void> {
  const { admin, kafka } = groups;
  await broker(groups, async () => {
    const topicsRead = await committedTopics(admin, target.groupId);
    const other = topicsRead.find((topic) => topic !== target.topic);
    if (other) {
      throw problems.consumerGroupConflict(
        `The consumer group ${target.group} reads ${other}; a group reads one topic. Unsubscribe it there first, or name another handler`,
      );
    }
    if (topicsRead.includes(target.topic)) return;
    const bounds = await topicBounds(admin, target.topic);
    try {
      await setGroupOffsets(kafka, target.groupId, target.topic, bounds.map(({ partition, high }) => ({ partition, offset: high })));
    } catch (error) {
      // Another stream of the group started first: it holds the group's start.
      if (!(error instanceof GroupNotEmptyError)) throw error;
    }
  });
}

/** What ReplayFrom did. */
export interface Replay {
  partitions: number;
  /** The group's lag right after the seek (docs/reference/events.md#rule-21: over 100 000 suppresses lag alerts). */
  lag: bigint;
}

/**
 * Checks ReplayFrom's timestamp against the topic's retention (docs/reference/events.md#rule-20; config
 * BROKER_RETENTION_HOURS and BROKER_AUDIT_RETENTION_HOURS): older is OUT_OF_RANGE, and so is a
 * time in the future, which has nothing to replay.
 */
export function checkReplayWindow(target: TenantGroup, fromMs: number, retention: { standardHours: number; auditHours: number }, nowMs: number): void {
  const hours = retentionHours(target.topic, retention.standardHours, retention.auditHours);
  const oldest = nowMs - hours * 3_600_000;
  if (fromMs < oldest) {
    throw problems.replayOutOfRange(
      `from_timestamp ${new Date(fromMs).toISOString()} is older than the ${hours} h retention of ${target.topic} (the oldest is ${new Date(oldest).toISOString()})`,
    );
  }
  if (fromMs > nowMs) throw problems.replayOutOfRange(`from_timestamp ${new Date(fromMs).toISOString()} is in the future`);
}

/**
 * Moves a group that has committed on the topic to the first offset of each partition written at
 * or after `fromMs`; NOT_FOUND for a group that has never committed on the topic. Kafka moves only a
 * group without members: `endStreams` ends this gateway's streams of it once the group is known.
 */
export async function seekGroup(
  groups: GroupAdmin, target: TenantGroup, fromMs: number, endStreams: () => Promise<void>,
): Promise<Replay> {
  const { admin, kafka } = groups;
  return broker(groups, async () => {
    const committed = await committedOffsets(admin, target.groupId, target.topic);
    if (committed.length === 0) throw problems.notFound(`consumer group ${target.group} on ${target.topic}`);
    const offsets = await offsetsAtTime(admin, target.topic, fromMs);
    await endStreams();
    await untilEmpty(target, () => setGroupOffsets(kafka, target.groupId, target.topic, offsets));
    const position = positionOf(offsets, await topicBounds(admin, target.topic));
    return { partitions: offsets.length, lag: position?.lag ?? 0n };
  });
}

/**
 * Deletes a group that has committed on the topic, offsets and all, so a later Subscribe starts
 * afresh; NOT_FOUND when it has not and `open` says no stream of it is open here either (a group
 * reads one topic, so one that reads another is not found on this one). Kafka deletes only a group
 * without members: `endStreams` ends this gateway's streams of it once the group is known.
 */
export async function deleteTenantGroup(
  groups: GroupAdmin, target: TenantGroup, open: boolean, endStreams: () => Promise<unknown>,
): Promise<void> {
  const { admin } = groups;
  await broker(groups, async () => {
    const topicsRead = await committedTopics(admin, target.groupId);
    const elsewhere = topicsRead.some((topic) => topic !== target.topic);
    if (elsewhere || (!open && !topicsRead.includes(target.topic))) throw problems.notFound(`consumer group ${target.group} on ${target.topic}`);
    await endStreams();
    await untilEmpty(target, () => deleteGroup(admin, target.groupId));
  });
}

/** How long a group's members get to leave (a stream's consumer that was just stopped sends LeaveGroup at once). */
const EMPTY_WAIT_MS = [100, 200, 400, 800, 1500];

/**
 * Runs an operation Kafka allows only on a group without members, retrying while members remain:
 * the streams ended a moment ago are leaving. Members that stay belong to another gateway's
 * streams, which this one cannot end: FAILED_PRECONDITION.
 */
async function untilEmpty(target: TenantGroup, operation: () => Promise<void>): Promise<void> {
  for (const pause of [...EMPTY_WAIT_MS, null]) {
    try {
      return await operation();
    } catch (error) {
      if (!(error instanceof GroupNotEmptyError)) throw error;
      if (pause === null) {
        throw problems.consumerGroupConflict(`The consumer group ${target.group} still has members elsewhere (another gateway's streams); end them first`);
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
