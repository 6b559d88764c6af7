import { Gauge, type Registry } from 'prom-client';

/**
 * The gateway's topic tails on /metrics (services/events/consumers/topic-tail.ts):
 * `event_topic_tail_followers{topic}`, how many partitions of Subscribe streams read the topic from
 * the gateway's one fetch of it rather than each fetching it whole. A stream that fell behind the
 * tail, or a tail that restarted, shows as fewer (and the log says why: "fell behind the topic tail",
 * "topic tail crashed"); a topic whose streams have all left has no tail and no line.
 */
export function registerTopicTailMetrics(registry: Registry, snapshot: () => ReadonlyArray<{ topic: string; followers: number }>): void {
  new Gauge<'topic'>({
    name: 'event_topic_tail_followers',
    help: 'Partitions of Subscribe streams that follow the gateway\'s tail of the topic instead of fetching it themselves',
    labelNames: ['topic'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { topic, followers } of snapshot()) this.set({ topic }, followers);
    },
  });
}
