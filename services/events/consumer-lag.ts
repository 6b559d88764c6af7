import type { Admin } from '../../common/kafka';
import { committedOffsets, topicBounds, type PartitionBounds } from '../../common/kafka-groups';
import type { Logger } from '../../common/logger';

/**
 * Consumer lag per group (docs/reference/events.md#rule-21), sampled on a timer from the Kafka admin for
 * the groups one gateway knows: the platform's groups and the tenant groups it streams. Per group:
 * the lag in messages (Σ high watermark − committed offset), the lag age, the alert level it has
 * reached and whether alerts are suppressed after a bulk replay.
 *
 * **Lag age is the age of the oldest message the group has not passed**, estimated without reading
 * any message: every sample records each partition's high watermark with the time it was seen, and
 * the oldest unconsumed message of a partition (the one at the committed offset) was written before
 * the first sample whose high watermark is beyond that offset. So the age is a lower bound, at most
 * one sample interval short, that grows while a group is stuck or falling behind, and is 0 as soon as
 * the group has caught up. The history is kept HISTORY_MS, beyond the critical level; after a gateway
 * starts, ages count from its first sample.
 */

export type LagLevel = 'none' | 'warning' | 'error' | 'critical';

/** docs/reference/events.md#rule-21: over 1 minute warning, over 5 minutes error, over 15 minutes critical (paging). */
export const LAG_LEVELS: ReadonlyArray<{ level: LagLevel; overSeconds: number }> = [
  { level: 'critical', overSeconds: 15 * 60 },
  { level: 'error', overSeconds: 5 * 60 },
  { level: 'warning', overSeconds: 60 },
];

/** docs/reference/events.md#rule-21: a replay that makes lag exceed this suppresses lag alerts (BROKER_BULK_IMPORT_SUPPRESS_MINUTES). */
export const BULK_IMPORT_LAG = 100_000n;

/** Watermarks are remembered this long: longer than the critical level, so a stuck group reaches it. */
const HISTORY_MS = 20 * 60_000;

/** A tenant group stays watched this long after its last stream closed: an abandoned subscription's lag still alerts. */
export const TENANT_GROUP_WATCH_MS = 60 * 60_000;

export interface WatchedGroup {
  /** The Kafka group id (kafkaGroupId). */
  groupId: string;
  /** The group's name, `<service>.<handler>`. */
  group: string;
  /** Null for a platform group. */
  tenantId: string | null;
  topic: string;
}

export interface GroupLag extends WatchedGroup {
  lag: bigint;
  ageSeconds: number;
  /** The level the age has reached; 'none' while suppressed. */
  level: LagLevel;
  suppressed: boolean;
}

export interface ConsumerLagSettings {
  sampleIntervalMs: number;
  bulkImportSuppressMinutes: number;
}

export interface ConsumerLagSources {
  admin: Admin;
  /** The platform's groups (they run in the worker process; the gateway reads their offsets). */
  platformGroups: () => readonly WatchedGroup[];
  /** The tenant groups with a stream open in this gateway right now. */
  openGroups: () => readonly WatchedGroup[];
}

export function levelOf(ageSeconds: number): LagLevel {
  return LAG_LEVELS.find(({ overSeconds }) => ageSeconds > overSeconds)?.level ?? 'none';
}

export class ConsumerLag {
  /** Per topic and partition, the high watermarks seen, oldest first. */
  private readonly history = new Map<string, Map<number, Array<{ at: number; high: bigint }>>>();
  /** Tenant groups seen with a stream, and when last. */
  private readonly tenantGroups = new Map<string, { watched: WatchedGroup; lastOpenAt: number }>();
  private readonly suppressedUntil = new Map<string, number>();
  private latest: readonly GroupLag[] = [];
  private timer: NodeJS.Timeout | null = null;
  private sampling: Promise<void> | null = null;
  private failing = false;

  constructor(
    private readonly sources: ConsumerLagSources,
    private readonly settings: ConsumerLagSettings,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => { void this.sample(); }, this.settings.sampleIntervalMs);
    this.timer.unref();
    void this.sample();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sampling;
  }

  /** The groups' lag as of the last sample. */
  snapshot(): readonly GroupLag[] {
    return this.latest;
  }

  /** A tenant group was unsubscribed: its offsets are gone, so is its lag. */
  forget(groupId: string): void {
    this.tenantGroups.delete(groupId);
    this.suppressedUntil.delete(groupId);
    this.latest = this.latest.filter((entry) => entry.groupId !== groupId);
  }

  /**
   * A ReplayFrom moved the group back: lag alerts stay quiet for BROKER_BULK_IMPORT_SUPPRESS_MINUTES
   * when the replay made its lag exceed 100 000 (docs/reference/events.md#rule-21). The group is watched from
   * now on even if no stream of it is open here.
   */
  replayed(watched: WatchedGroup, lag: bigint): void {
    if (watched.tenantId) this.tenantGroups.set(watched.groupId, { watched, lastOpenAt: this.now() });
    if (lag > BULK_IMPORT_LAG) this.suppressedUntil.set(watched.groupId, this.now() + this.settings.bulkImportSuppressMinutes * 60_000);
  }

  /** One sample; concurrent calls share it. A broker that does not answer leaves the last sample in place. */
  sample(): Promise<void> {
    this.sampling ??= this.sampleOnce().finally(() => { this.sampling = null; });
    return this.sampling;
  }

  private async sampleOnce(): Promise<void> {
    const now = this.now();
    const groups = this.watchedGroups(now);
    try {
      if (groups.length === 0) {
        this.latest = [];
        return;
      }
      await this.sources.admin.connect();
      const topics = [...new Set(groups.map((group) => group.topic))];
      const bounds = new Map(await Promise.all(topics.map(async (topic) => [topic, await topicBounds(this.sources.admin, topic)] as const)));
      for (const [topic, partitions] of bounds) this.remember(topic, partitions, now);
      this.latest = await Promise.all(groups.map((group) => this.lagOf(group, bounds.get(group.topic) ?? [], now)));
      if (this.failing) this.logger.info('consumer lag sampled again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn({ err: error }, 'consumer lag could not be sampled; the last sample stays');
      this.failing = true;
    }
  }

  private watchedGroups(now: number): WatchedGroup[] {
    for (const watched of this.sources.openGroups()) this.tenantGroups.set(watched.groupId, { watched, lastOpenAt: now });
    for (const [groupId, { lastOpenAt }] of this.tenantGroups) {
      if (now - lastOpenAt > TENANT_GROUP_WATCH_MS) this.tenantGroups.delete(groupId);
    }
    for (const [groupId, until] of this.suppressedUntil) if (until <= now) this.suppressedUntil.delete(groupId);
    return [...this.sources.platformGroups(), ...[...this.tenantGroups.values()].map(({ watched }) => watched)];
  }

  private remember(topic: string, partitions: readonly PartitionBounds[], now: number): void {
    const byPartition = this.history.get(topic) ?? new Map<number, Array<{ at: number; high: bigint }>>();
    this.history.set(topic, byPartition);
    for (const { partition, high } of partitions) {
      const seen = byPartition.get(partition) ?? [];
      const last = seen.at(-1);
      // Only changes are kept: the first sample at a watermark is when it was reached.
      if (!last || last.high !== high) seen.push({ at: now, high });
      // Drop what is older than the window, keeping the newest of them: it still dates what came after it.
      while (seen.length > 1 && now - seen[1].at > HISTORY_MS) seen.shift();
      byPartition.set(partition, seen);
    }
  }

  private async lagOf(watched: WatchedGroup, bounds: readonly PartitionBounds[], now: number): Promise<GroupLag> {
    const committed = new Map((await committedOffsets(this.sources.admin, watched.groupId, watched.topic)).map((entry) => [entry.partition, entry.offset]));
    let lag = 0n;
    let oldest = now;
    for (const { partition, high } of bounds) {
      // As in GetConsumerPosition (group-offsets.ts positionOf): a partition the group has no offset
      // on counts as read to its end, and a group that has never committed on the topic has not started.
      const offset = committed.get(partition);
      if (offset === undefined || high <= offset) continue;
      lag += high - offset;
      const writtenBy = this.history.get(watched.topic)?.get(partition)?.find((seen) => seen.high > offset);
      oldest = Math.min(oldest, writtenBy?.at ?? now);
    }
    const ageSeconds = Math.round((now - oldest) / 1000);
    const suppressed = this.suppressedUntil.has(watched.groupId);
    return { ...watched, lag, ageSeconds, level: suppressed ? 'none' : levelOf(ageSeconds), suppressed };
  }
}
