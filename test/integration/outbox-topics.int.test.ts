import { randomBytes } from 'node:crypto';
import { config } from '../../common/config';
import { topicNames } from '../../services/events/topics';
import { alterTopicConfigs, deleteTopics, describeTopicConfigs, topicPartitionCounts, type Admin } from '../../common/kafka';
import { ensureTopics, plannedTopics } from '../../workers/topics';
import { testKafka } from '../helpers/kafka';

/** The topic catalogue of docs/reference/events.md#events on the shared broker, as `npm run topics` leaves them. */

const HOUR_MS = 3_600_000;
let admin: Admin;

beforeAll(async () => {
  admin = testKafka().admin();
  await admin.connect();
});

afterAll(() => admin?.disconnect());

const retentionOf = async (names: readonly string[] = topicNames) => {
  const configs = await describeTopicConfigs(admin, names, ['retention.ms']);
  return Object.fromEntries(names.map((name) => [name, configs.get(name)?.['retention.ms']]));
};

/** Topic settings reach the broker through the KRaft metadata log, a moment after the change is acknowledged. */
async function retentionBecomes(topic: string, value: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await retentionOf([topic]))[topic] !== value) {
    if (Date.now() > deadline) throw new Error(`${topic} retention.ms never became ${value}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('topics', () => {
  it('exist, all eight, with retention.ms from configuration (30 days for audit, 7 for the rest)', async () => {
    await ensureTopics(admin, plannedTopics(config().kafka));

    const { retentionHours, auditRetentionHours, partitions } = config().kafka;
    expect(await retentionOf()).toEqual(Object.fromEntries(topicNames.map((name) => [
      name, String((name === 'platform.audit.events' ? auditRetentionHours : retentionHours) * HOUR_MS),
    ])));
    expect([...(await topicPartitionCounts(admin, topicNames)).values()]).toEqual(topicNames.map(() => partitions));
  });

  it('running again changes nothing', async () => {
    const outcomes = await ensureTopics(admin, plannedTopics(config().kafka));
    expect(outcomes).toEqual(topicNames.map((topic) => ({ topic, created: false })));
  });

  // On a topic of its own planned like platform.notify.events: the shared catalogue topics are put
  // back by every other file's ensureTopics, which would take the drift away before this one sees it.
  it('puts a drifted retention back', async () => {
    const notify = plannedTopics(config().kafka).find((spec) => spec.name === 'platform.notify.events')!;
    const spec = { ...notify, name: `test.topics.${randomBytes(4).toString('hex')}` };
    try {
      expect(await ensureTopics(admin, [spec])).toEqual([{ topic: spec.name, created: true }]);
      await retentionBecomes(spec.name, notify.configs['retention.ms']);
      await alterTopicConfigs(admin, spec.name, { 'retention.ms': String(HOUR_MS) });
      await retentionBecomes(spec.name, String(HOUR_MS));

      const outcomes = await ensureTopics(admin, [spec]);

      expect(outcomes).toEqual([{
        topic: spec.name, created: false, retentionChanged: { from: String(HOUR_MS), to: notify.configs['retention.ms'] },
      }]);
      await retentionBecomes(spec.name, notify.configs['retention.ms']);
    } finally {
      await deleteTopics(admin, [spec.name]);
    }
  });
});
