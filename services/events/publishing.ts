import type { EventEnvelope } from '../../common/event-envelope';
import { newId } from '../../common/ids';
import type { Acknowledgement } from '../../common/fail-fast-producer';
import type { OutgoingRecord } from '../../common/kafka';
import { problems } from '../../common/problems';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { requestHash, runIdempotentEffect, type Answer } from '../idempotency/idempotent';
import type { DeclaredEvents } from './declared-events';
import { encodeEvent } from './envelope';
import { DEFAULT_SCHEMA_VERSION, MAX_EVENT_DATA_BYTES } from './event-rules';
import { sendCounted, type PublishMeter } from './publish-meter';
import { parseVersion, type Version } from './schema-compat';
import { payloadErrors, type ActiveSchema, type SchemaRegistry } from './schema-registry';
import { defaultTopicFor, topics, type TopicName } from './topics';

/**
 * Publishing an event through the bus on a module's behalf (docs/reference/events.md, rules 4 to 11; gRPC
 * Publish and BatchPublish share its rules, see topic-publishing.ts): the access rules, the schema
 * check, the envelope, and the record sent straight to Kafka (not through the outbox: the answer
 * names the partition and offset the broker gave it, and a broker that is down is the caller's 503
 * at once, nothing buffered).
 */

export interface EventPublishingDeps {
  db: DatabasePool;
  catalogue: DeclaredEvents;
  /** Whether a module is installed and active for a tenant (the gateway's installed-modules cache). */
  installed: { isActive(tenantId: string, slug: string): Promise<boolean> };
  schemas: SchemaRegistry;
  producer: {
    send(record: OutgoingRecord): Promise<Acknowledgement>;
    /** Several records of one topic in one producer batch (gRPC BatchPublish). */
    sendBatch(records: readonly OutgoingRecord[]): Promise<void>;
  };
  idempotencyTtlHours: number;
  /** Billing's count of the tenant's published events against its plan's eventsPerDay. */
  meter: PublishMeter;
}

export interface PublishRequest {
  type: string;
  data: Record<string, unknown>;
  schemaVersion?: string;
  /** The payload's size in bytes when it arrived serialized (a gRPC event's `data`); measured by serializing it otherwise. */
  dataBytes?: number;
}

export interface PublishedEvent {
  eventId: string;
  type: string;
  topic: TopicName;
  partition: number;
  offset: number;
}

export interface Publisher {
  tenantId: string;
  /** The trace of the request, carried in the envelope (docs/reference/events.md#rule-1). */
  traceId: string | null;
}

/** docs/reference/events.md#rule-4: the kernel namespaces and the one service each belongs to. */
const KERNEL_NAMESPACES: ReadonlyArray<readonly [string, string]> = [
  ['auth.', 'identity'],
  ['money.', 'money'],
  ['billing.', 'billing'],
  ['audit.', 'audit'],
  ['module.registry.', 'module registry'],
];

/** The service that alone may publish the type, or null for a module's type. */
export function kernelOwnerOf(type: string): string | null {
  return KERNEL_NAMESPACES.find(([prefix]) => type.startsWith(prefix))?.[1] ?? null;
}

/** docs/reference/events.md#rule-5: the publishing module is the first segment of the type. */
export const moduleOf = (type: string): string => type.slice(0, type.indexOf('.'));

const SCOPE = 'POST /events/publish';

/**
 * Publishes one event, at most once per Idempotency-Key when one is given (kept
 * EVENTS_IDEMPOTENCY_TTL_HOURS, 24 h; without a key every request publishes): 201 with where it
 * was stored, or 200 with the very same answer for the key used again with the same request
 * (another request under the key is 409 idempotency-conflict). Every check runs before the key is
 * looked up, outside its transaction (they read caches, which may load on the pool), so a replay
 * is checked again: one sent after its module was uninstalled is refused like a new request. A
 * refusal stores nothing; only the send to Kafka runs under the key's lock.
 */
export async function publishEvent(
  deps: EventPublishingDeps, publisher: Publisher, request: PublishRequest, idempotencyKey: string | undefined,
): Promise<Answer<PublishedEvent>> {
  const event = await checkPublication(deps, publisher.tenantId, request);
  // Under a key the event is counted in the key's transaction, so a replay (answered before this runs) counts nothing.
  const publish = async (tx?: DatabaseTransactionConnection): Promise<Answer<PublishedEvent>> => ({
    statusCode: 201, body: await send(deps, publisher, event, tx),
  });
  if (idempotencyKey === undefined) return publish();
  const idempotent = {
    tenantId: publisher.tenantId, scope: SCOPE, key: idempotencyKey,
    hash: requestHash({ type: request.type, data: request.data, schemaVersion: event.schemaVersion }), ttlHours: deps.idempotencyTtlHours,
  };
  const answer = await runIdempotentEffect(deps.db, idempotent, publish);
  // docs/reference/events.md#rule-11: a key seen again answers 200 with the original body.
  return { statusCode: answer.replayed ? 200 : answer.statusCode, body: answer.body };
}

/** An event that passed every publishing rule: its source module, and the payload with the caller's tenant. */
export type CheckedEvent = Pick<EventEnvelope, 'type' | 'source' | 'data' | 'schemaVersion'>;

/**
 * The schemas a batch's earlier events were admitted with, by type and version. The rules that
 * depend on the type and version alone (the version's form, the kernel namespaces, the module's
 * declaration and installation, the registered schema) are checked once per type and version of a
 * batch, which mostly holds one type: checked again for each of 500 events they took about a tenth
 * of a BatchPublish's CPU (bench/events.bench.ts, profiled).
 */
export type AdmittedTypes = Map<string, ActiveSchema>;

/**
 * The publishing rules for a module's event (docs/reference/events.md, rules 4 to 9), in the order REST and
 * gRPC both answer them: the version's form, the kernel namespaces, the 1 MB payload, the module's
 * declaration and installation, the registered schema and the payload's match with it. Returns the event as
 * it is sent: `tenantId` / `tenant_id` members of the payload overwritten with the caller's tenant. A
 * batch passes the same `admitted` for each of its events; an event of a type admitted before is
 * checked for its size and payload only.
 */
export async function checkPublication(
  deps: EventPublishingDeps, tenantId: string, request: PublishRequest, admitted?: AdmittedTypes,
): Promise<CheckedEvent> {
  const { type, data } = request;
  const versionText = request.schemaVersion ?? DEFAULT_SCHEMA_VERSION;
  const typeKey = `${type} ${versionText}`;
  let schema = admitted?.get(typeKey);
  if (schema) {
    checkSize(request);
  } else {
    schema = await admittedSchema(deps, tenantId, request, versionText);
    admitted?.set(typeKey, schema);
  }
  // docs/reference/events.md#rule-3: the tenant is the caller's, whatever the payload says.
  const payload = withTenant(data, tenantId);
  const errors = payloadErrors(schema, payload);
  if (errors.length > 0) throw problems.validation(errors, `data does not match the schema of ${type} ${schema.versionText}`);
  return { type, source: moduleOf(type), data: payload, schemaVersion: versionText };
}

/** The rules before the payload's match, in their order; the schema the payload must match. */
async function admittedSchema(deps: EventPublishingDeps, tenantId: string, request: PublishRequest, versionText: string): Promise<ActiveSchema> {
  const { type } = request;
  const version = parseVersion(versionText);
  if (!version) throw problems.invalidSchemaVersion(`schemaVersion ${versionText} is not a semantic version such as 1.0.0`);
  const module = moduleOf(type);
  const owner = kernelOwnerOf(type);
  if (owner) throw problems.eventTopicProtected(module, type, owner);
  checkSize(request);
  await checkDeclared(deps, tenantId, module, type);
  return schemaOf(deps, type, version, versionText);
}

function checkSize({ data, dataBytes }: PublishRequest): void {
  const size = dataBytes ?? Buffer.byteLength(JSON.stringify(data));
  if (size > MAX_EVENT_DATA_BYTES) throw problems.eventPayloadTooLarge(MAX_EVENT_DATA_BYTES, size);
}

async function checkDeclared(deps: EventPublishingDeps, tenantId: string, module: string, type: string): Promise<void> {
  const manifest = deps.catalogue.get(module);
  if (!manifest) throw problems.eventNotDeclared(module, type, `there is no module ${module}`);
  if (!manifest.events.publishes.includes(type)) throw problems.eventNotDeclared(module, type, 'its manifest does not declare it in events.publishes');
  if (!await deps.installed.isActive(tenantId, module)) throw problems.eventNotDeclared(module, type, 'the module is not installed and active for this tenant');
}

/**
 * The type's current schema, which `schemaVersion` must belong to: the same major version, not
 * newer than the registered one. Payloads of an older minor or patch version are checked against
 * the current schema, which (being backward compatible) accepts them.
 */
async function schemaOf(deps: EventPublishingDeps, type: string, version: Version, versionText: string): Promise<ActiveSchema> {
  const schema = await deps.schemas.current(type);
  if (!schema) {
    throw problems.validation([{ field: 'type', code: 'UNKNOWN_EVENT_TYPE', message: `no schema is registered for ${type}` }],
      `${type} matches no registered schema; installing the module again registers its schemas`);
  }
  if (version.major !== schema.version.major || version.minor > schema.version.minor
    || (version.minor === schema.version.minor && version.patch > schema.version.patch)) {
    // INVALID_SCHEMA_VERSION stays the code of a malformed version; a well-formed one the registry lacks is named
    // on its field, as an unknown type is (docs/decisions/events.md).
    throw problems.validation([{
      field: 'schemaVersion', code: 'UNKNOWN_SCHEMA_VERSION',
      message: `${type} has no schema version ${versionText}; the current one is ${schema.versionText}`,
    }], `${type} has no schema version ${versionText}`);
  }
  return schema;
}

function withTenant(data: Record<string, unknown>, tenantId: string): Record<string, unknown> {
  const payload = { ...data };
  for (const member of ['tenantId', 'tenant_id']) if (Object.hasOwn(payload, member)) payload[member] = tenantId;
  return payload;
}

/**
 * docs/reference/events.md#rule-11: the partition key is the id of the topic's entity, read from the
 * payload as the catalogue (topics.ts) names it (`record_id`) or in camelCase (`recordId`), and on the data topic also as
 * `id` (a record's own id). A payload without it is keyed by the event id: such events have no
 * entity whose order could matter.
 */
export function partitionKeyOf(topic: TopicName, data: Record<string, unknown>, eventId: string): string {
  const entity = Object.values(topics).find((entry) => entry.name === topic)!.key;
  const camel = entity.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
  const candidates = topic === topics.data.name ? [entity, camel, 'id'] : [entity, camel];
  for (const name of candidates) {
    const value = data[name];
    if ((typeof value === 'string' && value !== '') || typeof value === 'number') return String(value);
  }
  return eventId;
}

/** Where a checked event goes: its id, topic and partition key, and when it occurred (by default now). */
export interface Placement {
  id: string;
  topic: TopicName;
  key: string;
  timestamp?: string;
}

/** The broker record of a checked event: the envelope of docs/reference/events.md#rule-1 with the caller's tenant and trace. */
export function eventRecord(publisher: Publisher, event: CheckedEvent, placement: Placement): OutgoingRecord {
  const envelope: EventEnvelope = {
    id: placement.id, type: event.type, source: event.source, tenantId: publisher.tenantId, data: event.data,
    schemaVersion: event.schemaVersion, timestamp: placement.timestamp ?? new Date().toISOString(), traceId: publisher.traceId,
  };
  return encodeEvent({ topic: placement.topic, key: placement.key, envelope, correlationId: null });
}

async function send(deps: EventPublishingDeps, publisher: Publisher, event: CheckedEvent, tx?: DatabaseTransactionConnection): Promise<PublishedEvent> {
  const id = newId();
  const topic = defaultTopicFor(event.type);
  const record = eventRecord(publisher, event, { id, topic, key: partitionKeyOf(topic, event.data, id) });
  const acknowledged = await sendCounted(deps.meter, publisher.tenantId, 1, () => deps.producer.send(record), tx);
  return { eventId: id, type: event.type, topic, partition: acknowledged.partition, offset: Number(acknowledged.offset) };
}
