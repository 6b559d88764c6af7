import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  createConsumer, onGroupJoin, runCommittingConsumer, type Consumer, type Kafka, type MessageChunk,
} from '../../common/kafka';
import type { Logger } from '../../common/logger';
import { removeObjects, type ObjectStore } from '../../common/object-store';
import type { DatabasePool } from '../../db/pool';
import { selectFile } from '../../db/queries/files/files.queries';
import { withTenant } from '../../db/tenant';
import { fileScanWorkflowId, fileStagedSignal } from '../../workflows/files/files.messages';
import { presignedFileOfKey } from './object-keys';

/**
 * How the platform notices a presigned upload's PUT without a call from the client: the object
 * store sends its bucket notifications to Kafka (versitygw --event-kafka-topic, S3_EVENT_KAFKA_TOPIC,
 * filtered to s3:ObjectCreated:Put by scripts/infra/services/s3.sh), and this consumer signals
 * `fileStaged` to the scan workflow `files.scan:<fileId>` of every object created under a presigned
 * upload's staging key `{tenantId}/staging/{fileId}` of the platform's bucket. Everything else on the
 * topic is passed over without a call: the store's test event at its start, other buckets, and the
 * platform's own PUTs (the thumbnails, and the staged objects of the files the gateway receives
 * itself, `{tenantId}/staging/received-{fileId}`, whose scans it starts itself). Signalling those cost
 * every upload a signal and a read, or an extra workflow task when the notification came while its
 * scan ran.
 *
 * A signal is safe to repeat and to come late: a running workflow already staged ignores it (a
 * second PUT of a URL still valid), and a closed one (its URL expired, or its scan is over) answers
 * not-found. Then the PUT came after the file's scan was over (a second PUT of a still valid URL, or
 * one that finished past the wait): if the file has left pending_scan, its staged object is removed,
 * since nothing will ever scan or remove it; a file still pending keeps it (nothing is removed from
 * under a file that may yet be scanned). Offsets are committed after the chunk's signals went out
 * (at least once).
 */

/** One record of an S3 event notification (the AWS layout versitygw follows), as far as it is read here. */
interface StoreEventRecord {
  eventName?: unknown;
  s3?: { bucket?: { name?: unknown }; object?: { key?: unknown } };
}

/** The files whose staged object a notification says was created in `bucket`. */
export function stagedFilesOfNotification(value: Buffer | null, bucket: string): Array<{ tenantId: string; fileId: string }> {
  let event: { Records?: unknown };
  try {
    event = JSON.parse(value?.toString('utf8') ?? 'null') as { Records?: unknown };
  } catch {
    return [];
  }
  if (!event || !Array.isArray(event.Records)) return [];
  return (event.Records as StoreEventRecord[]).flatMap((record) => {
    const created = typeof record.eventName === 'string' && record.eventName.startsWith('s3:ObjectCreated:');
    const key = record.s3?.object?.key;
    const file = created && record.s3?.bucket?.name === bucket && typeof key === 'string' ? presignedFileOfKey(key) : null;
    return file ? [file] : [];
  });
}

export interface StagedObjectConsumerDeps {
  kafka: Kafka;
  temporal: Client;
  /** The application role: a late PUT's file is looked up under row-level security. */
  appPool: DatabasePool;
  /** The platform's bucket (S3_BUCKET), where late PUTs are removed from. */
  objectStore: ObjectStore;
  /** S3_EVENT_KAFKA_TOPIC. */
  topic: string;
  groupId: string;
  logger: Logger;
}

export const STAGED_OBJECT_CONSUMER_JOINED = 'staged object consumer joined its group';

/** The most notifications handled at once: their signals go out in parallel. */
const CHUNK_SIZE = 50;

/**
 * A fetch waits up to this long for notifications to gather (at most 1 MiB of them): the store
 * notifies every PUT, three per upload through the gateway, and a fetch answered at each one, with a
 * commit after it, cost the broker more CPU than the uploads' own events did (bench:files). A
 * presigned upload's scan starts at most this much later.
 */
const GATHER = { maxWaitTimeInMs: 250, minBytes: 1 << 20 } as const;

export class StagedObjectConsumer {
  private consumer: Consumer | null = null;

  constructor(private readonly deps: StagedObjectConsumerDeps) {}

  /** Joins the group and starts consuming; resolves once the consumer runs. */
  async start(): Promise<void> {
    const { kafka, logger, groupId, topic } = this.deps;
    const consumer = createConsumer(kafka, { groupId, ...GATHER, allowAutoTopicCreation: false });
    onGroupJoin(consumer, (assignment) => logger.info({ groupId, assignment }, STAGED_OBJECT_CONSUMER_JOINED));
    this.consumer = consumer;
    await consumer.connect();
    await runCommittingConsumer(consumer, {
      topic,
      // A group's first start reads what the topic retains: a PUT notified before it is not missed.
      fromBeginning: true,
      partitionsConcurrently: 1,
      chunkSize: CHUNK_SIZE,
      handle: (chunk) => this.handle(chunk),
    });
  }

  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = null;
    await consumer?.disconnect();
  }

  private async handle({ messages }: MessageChunk): Promise<void> {
    const files = messages.flatMap((message) => stagedFilesOfNotification(message.value, this.deps.objectStore.bucket));
    await Promise.all(files.map((file) => this.signal(file)));
  }

  private async signal({ tenantId, fileId }: { tenantId: string; fileId: string }): Promise<void> {
    try {
      await this.deps.temporal.workflow.getHandle(fileScanWorkflowId(fileId)).signal(fileStagedSignal);
      this.deps.logger.debug({ tenantId, fileId }, 'staged object noticed; its scan was signalled');
    } catch (error) {
      // Closed (expired, or scanned already) or not started yet: nothing waits for this PUT.
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      await this.removeLatePut({ tenantId, fileId });
    }
  }

  private async removeLatePut({ tenantId, fileId }: { tenantId: string; fileId: string }): Promise<void> {
    const { appPool, objectStore, logger } = this.deps;
    const file = await withTenant(appPool, tenantId, (tx) => selectFile(tx, tenantId, fileId));
    if (!file || file.status === 'pending_scan') return;
    await removeObjects(objectStore, [file.stagingKey]);
    logger.info({ tenantId, fileId, status: file.status }, 'a PUT after the file\'s scan was over; its staged object removed');
  }
}
