import type { DatabaseTransactionConnection } from '../../db/pool';
import { insertOutboxEvents, type NewOutboxEvent } from '../../db/queries/events/outbox.queries';
import { isUuid, newId } from '../../common/ids';
import { problems, type FieldError } from '../../common/problems';
import { DEFAULT_SCHEMA_VERSION, MAX_EVENT_DATA_BYTES, isEventType, isSchemaVersion } from './event-rules';
import { defaultTopicFor, isTopicName, type TopicName } from './topics';

export interface EventInput {
  tenantId: string;
  /** `<domain>.<entity>.<action>`, e.g. `money.wallet.credited`. */
  type: string;
  /** The module or service that publishes. */
  source: string;
  /** A catalogue topic; by default the one of the type's domain (see defaultTopicFor). */
  topic?: string;
  /** The partition key: the id of the entity the event is about, so its events stay in order. */
  key: string;
  data: Record<string, unknown>;
  schemaVersion?: string;
  traceId?: string;
  correlationId?: string;
}

/**
 * Writes an event to the outbox inside the caller's transaction (the `tx` of withTenant), so it is
 * published if and only if the business change commits; the relay takes it from there. Returns the
 * event id (UUID v7), which consumers use to de-duplicate. Invalid input is a validation problem.
 */
export async function enqueueEvent(tx: DatabaseTransactionConnection, input: EventInput): Promise<string> {
  const [id] = await enqueueEvents(tx, [input]);
  return id;
}

/**
 * Several events of one business change in one INSERT (one round trip instead of one per event),
 * with the same checks and the same transaction guarantee as enqueueEvent. Returns the event ids in order.
 */
export async function enqueueEvents(tx: DatabaseTransactionConnection, inputs: readonly EventInput[]): Promise<string[]> {
  const events = inputs.map(outboxEventOf);
  await insertOutboxEvents(tx, events);
  return events.map((event) => event.id);
}

/**
 * The checked outbox row of an event, with its new id, also for a statement that writes it together
 * with the change it reports (services/identity/sessions.ts; services/idempotency/idempotent.ts stores
 * an answer and its rows in one statement).
 */
export function outboxEventOf(input: EventInput): NewOutboxEvent {
  const topic = checkEvent(input);
  return {
    id: newId(),
    tenantId: input.tenantId,
    topic,
    partitionKey: input.key,
    type: input.type,
    source: input.source,
    data: input.data,
    schemaVersion: input.schemaVersion ?? DEFAULT_SCHEMA_VERSION,
    traceId: input.traceId ?? null,
    correlationId: input.correlationId ?? null,
  };
}

/** Checks every field at once (so one answer names every mistake) and returns the topic to use. */
function checkEvent(input: EventInput): TopicName {
  const errors: FieldError[] = [];
  const fail = (field: string, code: string, message: string) => errors.push({ field, code, message });

  if (!isUuid(input.tenantId)) fail('tenantId', 'invalid-tenant', 'tenantId must be a UUID');
  if (!isEventType(input.type)) fail('type', 'invalid-event-type', 'type must look like <domain>.<entity>.<action> in lower case');
  if (!input.source) fail('source', 'required', 'source names the publishing module or service');
  if (!input.key) fail('key', 'required', 'key is the id of the entity the event is about');
  if (input.schemaVersion !== undefined && !isSchemaVersion(input.schemaVersion)) {
    fail('schemaVersion', 'invalid-schema-version', 'schemaVersion must be a semantic version such as 1.0.0');
  }
  let topic = defaultTopicFor(input.type);
  if (input.topic !== undefined) {
    if (isTopicName(input.topic)) topic = input.topic;
    else fail('topic', 'unknown-topic', `${input.topic} is not a topic of the catalogue`);
  }
  if (typeof input.data !== 'object' || input.data === null || Array.isArray(input.data)) {
    fail('data', 'invalid-data', 'data must be a JSON object');
  } else if (Buffer.byteLength(JSON.stringify(input.data)) > MAX_EVENT_DATA_BYTES) {
    fail('data', 'payload-too-large', `data must serialize to at most ${MAX_EVENT_DATA_BYTES} bytes`);
  }
  if (errors.length > 0) throw problems.validation(errors, 'The event is not valid');
  return topic;
}
