import { loadConfig } from '../../../common/config';
import { plannedTopics } from '../../../workers/topics';

describe('topics to create', () => {
  const kafka = loadConfig({ BROKER_RETENTION_HOURS: '168', BROKER_AUDIT_RETENTION_HOURS: '720', BROKER_PARTITIONS: '6' }).kafka;

  it('plans the eight catalogue topics with partitions from configuration and one replica', () => {
    const plan = plannedTopics(kafka);
    expect(plan).toHaveLength(8);
    for (const topic of plan) expect(topic).toMatchObject({ partitions: 6, replicationFactor: 1 });
  });

  it('sets retention.ms: 168 h for standard topics, 720 h for the audit topic', () => {
    const retention = Object.fromEntries(plannedTopics(kafka).map((topic) => [topic.name, topic.configs['retention.ms']]));
    expect(retention['platform.audit.events']).toBe(String(720 * 3_600_000));
    expect(retention['platform.money.events']).toBe(String(168 * 3_600_000));
    expect(new Set(Object.values(retention))).toEqual(new Set([String(720 * 3_600_000), String(168 * 3_600_000)]));
  });
});
