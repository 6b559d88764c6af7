/**
 * The shape rules of an event (docs/reference/events.md#rule-1), shared by the outbox writer, the REST
 * publisher and the envelope decoder. The type and version patterns are the same as the CHECK constraints on
 * outbox_events, so a row the writer accepts is never refused by the table.
 */

/** `<domain>.<entity>.<action>` in lower case; kernel namespaces may nest (`module.registry.installed`). */
export const EVENT_TYPE_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+){2,}$/;

/** Semantic version without pre-release or build parts. */
export const SCHEMA_VERSION_PATTERN = /^\d+\.\d+\.\d+$/;

export const DEFAULT_SCHEMA_VERSION = '1.0.0';

/** docs/reference/events.md#rule-9: an event payload is at most 1 MB (serialized). */
export const MAX_EVENT_DATA_BYTES = 1024 * 1024;

export function isEventType(value: string): boolean {
  return EVENT_TYPE_PATTERN.test(value);
}

export function isSchemaVersion(value: string): boolean {
  return SCHEMA_VERSION_PATTERN.test(value);
}

/** docs/reference/events.md, Limits: a BatchPublish carries at most 500 events. */
export const MAX_BATCH_EVENTS = 500;
