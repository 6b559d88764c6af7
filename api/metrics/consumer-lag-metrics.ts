import { Gauge, type Registry } from 'prom-client';
import type { GroupLag, LagLevel } from '../../services/events/consumer-lag';

const LEVEL_VALUE: Record<LagLevel, number> = { none: 0, warning: 1, error: 2, critical: 3 };

type Labels = 'group' | 'tenant' | 'topic';

/**
 * Consumer lag on the gateway's /metrics (docs/reference/events.md#rule-21), read from the last sample of
 * services/events/consumer-lag.ts (taken on a timer, never per scrape). Labels: `group` the group's
 * name, `tenant` its tenant (empty for a platform group), `topic`. A group no longer watched
 * disappears from the next scrape. Alert rules fire on `event_consumer_lag_alert_level`: it already
 * holds that rule's levels by lag age and is 0 while `event_consumer_lag_alert_suppressed` is 1.
 */
export function registerConsumerLagMetrics(registry: Registry, snapshot: () => readonly GroupLag[]): void {
  const gauge = (name: string, help: string, value: (lag: GroupLag) => number) => new Gauge<Labels>({
    name, help, labelNames: ['group', 'tenant', 'topic'], registers: [registry],
    collect() {
      this.reset();
      for (const lag of snapshot()) this.set({ group: lag.group, tenant: lag.tenantId ?? '', topic: lag.topic }, value(lag));
    },
  });
  gauge('event_consumer_lag_messages', 'Messages of the topic the consumer group has not passed yet (shared topics: other tenants\' too)',
    (lag) => Number(lag.lag));
  gauge('event_consumer_lag_age_seconds', 'Age of the oldest message the consumer group has not passed (0 when caught up)',
    (lag) => lag.ageSeconds);
  gauge('event_consumer_lag_alert_level', 'Lag alert level by lag age: 0 none, 1 warning (over 1 min), 2 error (over 5 min), 3 critical (over 15 min, paging)',
    (lag) => LEVEL_VALUE[lag.level]);
  gauge('event_consumer_lag_alert_suppressed', '1 while lag alerts are suppressed after a replay that pushed lag over 100 000',
    (lag) => (lag.suppressed ? 1 : 0));
}
