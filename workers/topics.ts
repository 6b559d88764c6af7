import { config, type Config } from '../common/config';
import { topicNames, retentionHours, type TopicName } from '../services/events/topics';
import {
  alterTopicConfigs, createKafka, createTopics, describeTopicConfigs, listTopics, topicPartitionCounts,
  type Admin, type TopicSpec,
} from '../common/kafka';

/**
 * Creates the eight topics of the catalogue (docs/reference/events.md#events; `npm run topics`). The broker does not create topics on
 * first use, so this runs once per environment before the relay and the consumers; running it again
 * changes nothing unless the retention in configuration changed.
 *
 * A topic's partition count is reported but never changed: more partitions would move keys to other
 * partitions and break the per-entity order that consumers rely on.
 */

const HOUR_MS = 3_600_000;
const RETENTION = 'retention.ms';

/** Locally one broker, so one replica; production sets its own replication outside this script. */
const REPLICATION_FACTOR = 1;

export function plannedTopics(kafka: Config['kafka']): TopicSpec[] {
  return topicNames.map((name: TopicName) => ({
    name,
    partitions: kafka.partitions,
    replicationFactor: REPLICATION_FACTOR,
    configs: { [RETENTION]: String(retentionHours(name, kafka.retentionHours, kafka.auditRetentionHours) * HOUR_MS) },
  }));
}

/**
 * The object store's bucket notifications (S3_EVENT_KAFKA_TOPIC; services/files/staged-objects.ts),
 * not a topic of the catalogue: created here because the store sends a test event to it when it starts,
 * and the broker creates no topic on first use.
 */
export function storeEventTopics(cfg: Pick<Config, 'kafka' | 'files'>): TopicSpec[] {
  const name = cfg.files.storeEventsTopic;
  return name ? [{
    name, partitions: cfg.kafka.partitions, replicationFactor: REPLICATION_FACTOR,
    configs: { [RETENTION]: String(cfg.kafka.retentionHours * HOUR_MS) },
  }] : [];
}

export interface TopicOutcome {
  topic: string;
  created: boolean;
  retentionChanged?: { from: string; to: string };
  partitionsDiffer?: { actual: number; configured: number };
}

export async function ensureTopics(admin: Admin, specs: readonly TopicSpec[]): Promise<TopicOutcome[]> {
  const existing = new Set(await listTopics(admin));
  const missing = specs.filter((spec) => !existing.has(spec.name));
  const present = specs.filter((spec) => existing.has(spec.name));
  if (missing.length > 0) await createTopics(admin, missing);

  const outcomes: TopicOutcome[] = missing.map((spec) => ({ topic: spec.name, created: true }));
  if (present.length === 0) return outcomes;

  const names = present.map((spec) => spec.name);
  const [configs, partitions] = await Promise.all([
    describeTopicConfigs(admin, names, [RETENTION]),
    topicPartitionCounts(admin, names),
  ]);
  for (const spec of present) {
    const outcome: TopicOutcome = { topic: spec.name, created: false };
    const retention = configs.get(spec.name)?.[RETENTION] ?? '';
    if (retention !== spec.configs[RETENTION]) {
      await alterTopicConfigs(admin, spec.name, spec.configs);
      outcome.retentionChanged = { from: retention, to: spec.configs[RETENTION] };
    }
    const actual = partitions.get(spec.name) ?? 0;
    if (actual !== spec.partitions) outcome.partitionsDiffer = { actual, configured: spec.partitions };
    outcomes.push(outcome);
  }
  return outcomes;
}

function summarize({ topic, created, retentionChanged, partitionsDiffer }: TopicOutcome): string[] {
  if (created) return [`created   ${topic}`];
  const lines: string[] = [];
  if (retentionChanged) lines.push(`updated   ${topic}: ${RETENTION} ${retentionChanged.from || '(unset)'} -> ${retentionChanged.to}`);
  if (partitionsDiffer) {
    lines.push(`warning   ${topic} has ${partitionsDiffer.actual} partitions, configuration says ${partitionsDiffer.configured}; `
      + 'left as is (changing it would move keys to other partitions)');
  }
  return lines.length > 0 ? lines : [`unchanged ${topic}`];
}

async function main(): Promise<void> {
  const cfg = config();
  const settings = cfg.kafka;
  const admin = createKafka(settings).admin();
  await admin.connect();
  try {
    const outcomes = await ensureTopics(admin, [...plannedTopics(settings), ...storeEventTopics(cfg)]);
    for (const line of outcomes.flatMap(summarize)) process.stdout.write(`${line}\n`);
  } finally {
    await admin.disconnect();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`topics: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
