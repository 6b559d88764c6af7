import { topicPartitionCounts, type Admin } from '../../common/kafka';
import { problems } from '../../common/problems';
import { topicNames, type TopicName } from './topics';

export interface TopicInfo {
  name: TopicName;
  partitionCount: number;
}

/**
 * The catalogue's topics with their partition counts as the broker reports them (ListTopics,
 * docs/reference/events.md, Resources), kept for `ttlMs`: partition counts change only when an operator adds
 * partitions, and a burst of ListTopics calls should not become a burst of metadata requests. Concurrent
 * calls share one request; a failed one is not remembered, and is the caller's 503 / UNAVAILABLE.
 */
export class TopicPartitions {
  private cached: { topics: TopicInfo[]; loadedAt: number } | null = null;
  private loading: Promise<TopicInfo[]> | null = null;

  constructor(private readonly admin: Admin, private readonly ttlMs: number, private readonly now: () => number = Date.now) {}

  async list(): Promise<TopicInfo[]> {
    if (this.cached && this.now() - this.cached.loadedAt < this.ttlMs) return this.cached.topics;
    this.loading ??= this.load().finally(() => { this.loading = null; });
    return this.loading;
  }

  private async load(): Promise<TopicInfo[]> {
    let counts: Map<string, number>;
    try {
      // connect() is a no-op while connected and reconnects after the broker came back.
      await this.admin.connect();
      counts = await topicPartitionCounts(this.admin, topicNames);
    } catch (error) {
      throw problems.eventsBrokerUnavailable(error);
    }
    const topics = topicNames.map((name) => ({ name, partitionCount: counts.get(name) ?? 0 }));
    this.cached = { topics, loadedAt: this.now() };
    return topics;
  }
}
