import { isUuid, newId } from '../../common/ids';
import type { OutgoingRecord } from '../../common/kafka';
import { Problem, problems, type FieldError } from '../../common/problems';
import { MAX_BATCH_EVENTS, isEventType } from './event-rules';
import { sendCounted } from './publish-meter';
import { checkPublication, eventRecord, type AdmittedTypes, type EventPublishingDeps, type Publisher } from './publishing';
import { defaultTopicFor, isTopicName, type TopicName } from './topics';

/**
 * Publishing to a named topic with the caller's own partition key (docs/reference/events.md#rule-12, gRPC Publish and
 * BatchPublish). The rules are REST publishing's (publishing.ts: kernel namespaces, the module's
 * declaration, the registered schema, 1 MB), with what the gRPC messages add: the topic must exist
 * and be the type's own, the key is required, and the event may carry its id and occurrence time.
 */

export interface TopicEvent {
  /** The partition key (PublishRequest.key): the id of the entity the event is about. */
  key: string;
  type: string;
  data: Record<string, unknown>;
  /** The payload's size as it arrived (the UTF-8 JSON bytes of the gRPC event's `data`). */
  dataBytes?: number;
  schemaVersion?: string;
  /** The publisher's event id (the SDK's idempotency key, a UUID); a new UUID v7 when absent. */
  id?: string;
  /** When the event occurred (ISO 8601); the publish time when absent. */
  timestamp?: string;
  /** The trace of the request that caused the event, when the publisher names one; the call's otherwise. */
  traceId?: string;
}

export interface TopicAcknowledgement {
  eventId: string;
  partition: number;
  offset: number;
}

/** One event, acknowledged by every in-sync replica before the answer. */
export async function publishToTopic(
  deps: EventPublishingDeps, publisher: Publisher, topic: string, event: TopicEvent,
): Promise<TopicAcknowledgement> {
  const target = topicOf(topic);
  const { id, record } = await prepare(deps, publisher, target, event);
  const acknowledged = await sendCounted(deps.meter, publisher.tenantId, 1, () => deps.producer.send(record));
  return { eventId: id, partition: acknowledged.partition, offset: Number(acknowledged.offset) };
}

/**
 * Up to MAX_BATCH_EVENTS events of one topic, all checked before any is sent (one refused event
 * refuses the batch, naming its index), then sent in one producer batch. Returns their ids in order.
 */
export async function publishBatchToTopic(
  deps: EventPublishingDeps, publisher: Publisher, topic: string, events: readonly TopicEvent[],
): Promise<string[]> {
  if (events.length === 0 || events.length > MAX_BATCH_EVENTS) {
    throw problems.validation([{
      field: 'items', code: 'INVALID_BATCH_SIZE', message: `a batch holds 1 to ${MAX_BATCH_EVENTS} events; this one holds ${events.length}`,
    }], `BatchPublish takes at most ${MAX_BATCH_EVENTS} items`);
  }
  const target = topicOf(topic);
  const prepared: Array<{ id: string; record: OutgoingRecord }> = [];
  const admitted: AdmittedTypes = new Map();
  const publishedAt = new Date().toISOString();
  // One after the other: the first event of a type checks its rules, the others of its type are admitted with it.
  for (const [index, event] of events.entries()) {
    try {
      prepared.push(await prepare(deps, publisher, target, { timestamp: publishedAt, ...event }, admitted));
    } catch (error) {
      throw error instanceof Problem ? forItem(error, index) : error;
    }
  }
  // The batch counts as its number of events, refused whole when they would pass the day's limit together.
  await sendCounted(deps.meter, publisher.tenantId, prepared.length, () => deps.producer.sendBatch(prepared.map(({ record }) => record)));
  return prepared.map(({ id }) => id);
}

/** A catalogue topic, or 404: the NOT_FOUND of docs/reference/events.md#rule-12. */
function topicOf(topic: string): TopicName {
  if (!topic) throw problems.validation([{ field: 'topic', code: 'REQUIRED', message: 'topic is required' }]);
  if (!isTopicName(topic)) throw problems.notFound(`topic ${topic}`);
  return topic;
}

async function prepare(
  deps: EventPublishingDeps, publisher: Publisher, topic: TopicName, event: TopicEvent, admitted?: AdmittedTypes,
): Promise<{ id: string; record: OutgoingRecord }> {
  const errors: FieldError[] = [];
  if (!event.key) errors.push({ field: 'key', code: 'REQUIRED', message: 'key is the id of the entity the event is about' });
  if (!isEventType(event.type)) {
    errors.push({ field: 'event.type', code: 'INVALID_EVENT_TYPE', message: 'type must look like <module>.<entity>.<action> in lower case' });
  }
  if (event.id !== undefined && !isUuid(event.id)) errors.push({ field: 'event.id', code: 'INVALID_FORMAT', message: 'id must be a UUID (v7 or v4)' });
  if (errors.length > 0) throw problems.validation(errors, 'The event is not valid');

  const checked = await checkPublication(deps, publisher.tenantId, event, admitted);
  // docs/reference/events.md#rule-5: a module's events go to its topic (the data topic); the others are the services'.
  const own = defaultTopicFor(event.type);
  if (topic !== own) throw problems.forbidden(`Module ${checked.source} may not publish to ${topic}: ${event.type} belongs on ${own}`);
  const id = event.id ?? newId();
  const traced = event.traceId ? { ...publisher, traceId: event.traceId } : publisher;
  return { id, record: eventRecord(traced, checked, { id, topic, key: event.key, timestamp: event.timestamp }) };
}

/** A batch item's refusal, naming the item (`items[3]`) in its detail and field errors. */
function forItem(problem: Problem, index: number): Problem {
  const { errors, ...extensions } = problem.extensions;
  const named = errors?.map((error) => ({ ...error, field: `items[${index}].${error.field}` }));
  return new Problem(problem.type, `items[${index}]: ${problem.detail}`, named ? { ...extensions, errors: named } : extensions, { cause: problem.cause });
}
