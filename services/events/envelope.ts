import { EventEnvelope } from '../../common/event-envelope';
import { z } from 'zod';
import { EVENT_TYPE_PATTERN, SCHEMA_VERSION_PATTERN } from './event-rules';
import type { TopicName } from './topics';

/** An event on its way out: the envelope, where it goes, and what orders it. */
export interface OutgoingEvent {
  topic: TopicName;
  /** The partition key: the id of the entity the event is about. */
  key: string;
  envelope: EventEnvelope;
  /** Links related events of one saga (protos/platform/events/v1/events.proto, EventEnvelope.correlation_id); travels as a header. */
  correlationId: string | null;
}

export interface EventMessage {
  topic: TopicName;
  key: string;
  value: string;
  headers: Record<string, string>;
}

export const EVENT_HEADERS = {
  id: 'id',
  type: 'type',
  tenantId: 'tenantId',
  traceId: 'traceId',
  correlationId: 'correlationId',
  /**
   * Only on a dead letter's redelivery (services/events/dead-letters/redelivery.ts): the Kafka group id
   * the event is re-published for. That group handles it; every other group skips it (they handled it already).
   */
  redeliverTo: 'redeliverTo',
} as const;

export function encodeEvent({ topic, key, envelope, correlationId }: OutgoingEvent): EventMessage {
  const { id, type, source, tenantId, data, schemaVersion, timestamp, traceId } = envelope;
  const headers: Record<string, string> = {
    [EVENT_HEADERS.id]: id,
    [EVENT_HEADERS.type]: type,
    [EVENT_HEADERS.tenantId]: tenantId,
  };
  if (traceId) headers[EVENT_HEADERS.traceId] = traceId;
  if (correlationId) headers[EVENT_HEADERS.correlationId] = correlationId;
  // Built field by field so the value has exactly the documented members, in the documented order.
  const value = JSON.stringify({ id, type, source, tenantId, data, schemaVersion, timestamp, traceId });
  return { topic, key, value, headers };
}

/** What a consumer receives (the shape every Kafka client gives: bytes or strings). */
export interface ReceivedMessage {
  key: Buffer | string | null;
  value: Buffer | string | null;
  headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
}

/** A header as a string; a repeated header yields its first value. */
export function headerValue(message: ReceivedMessage, name: string): string | undefined {
  const raw = message.headers?.[name];
  const first = Array.isArray(raw) ? raw[0] : raw;
  return first === undefined ? undefined : first.toString();
}

const envelopeSchema = z.strictObject({
  id: z.uuid(),
  type: z.string().regex(EVENT_TYPE_PATTERN),
  source: z.string().min(1),
  tenantId: z.uuid(),
  data: z.record(z.string(), z.unknown()),
  schemaVersion: z.string().regex(SCHEMA_VERSION_PATTERN),
  timestamp: z.iso.datetime({ offset: true }),
  traceId: z.string().min(1).nullable(),
});

export class EventDecodeError extends Error {
  override name = 'EventDecodeError';
}

export interface DecodedEvent {
  key: string;
  envelope: EventEnvelope;
  correlationId: string | null;
}

/** Parses and checks a received event; a message that is not one of ours is an EventDecodeError. */
export function decodeEvent(message: ReceivedMessage): DecodedEvent {
  if (message.value === null || message.key === null) throw new EventDecodeError('An event message has a key and a value');
  let json: unknown;
  try {
    json = JSON.parse(message.value.toString());
  } catch (error) {
    throw new EventDecodeError('The message value is not JSON', { cause: error });
  }
  const parsed = envelopeSchema.safeParse(json);
  if (!parsed.success) throw new EventDecodeError(`Not an event envelope: ${z.prettifyError(parsed.error)}`);
  return {
    key: message.key.toString(),
    envelope: parsed.data,
    correlationId: headerValue(message, EVENT_HEADERS.correlationId) ?? null,
  };
}
