import { problems } from '../../common/problems';
import type { DeclaredEvents } from './declared-events';
import { isEventType } from './event-rules';
import { KERNEL_SCHEMAS } from './kernel-schemas';
import { compareVersions } from './schema-compat';
import type { ActiveSchema, SchemaRegistry } from './schema-registry';
import { defaultTopicFor, isTopicName } from './topics';

/**
 * GetTopicSchema (docs/reference/events.md#rule-6): the schema of a topic and its current active version. The
 * registry keeps one schema per event type, so the request's `topic` may name either:
 * - an event type (`crm.contact.created`): that type's current JSON Schema text and version;
 * - a catalogue topic (`platform.auth.events`): a JSON object `{"<type>": {"schemaVersion", "schema"}}`
 *   of every registered type published there, and the highest of their versions (each type's
 *   changes are backward compatible, so the topic's union of them is too).
 */
export interface TopicSchema {
  topic: string;
  schema: string;
  schemaVersion: string;
}

export interface TopicSchemaDeps {
  schemas: SchemaRegistry;
  catalogue: DeclaredEvents;
}

export async function topicSchema(deps: TopicSchemaDeps, topic: string): Promise<TopicSchema> {
  if (!topic) throw problems.validation([{ field: 'topic', code: 'REQUIRED', message: 'topic names a topic or an event type' }]);
  if (isTopicName(topic)) {
    const types = knownTypes(deps.catalogue).filter((type) => defaultTopicFor(type) === topic);
    const registered = (await Promise.all(types.map((type) => deps.schemas.current(type)))).filter((schema) => schema !== null);
    if (registered.length === 0) throw problems.notFound(`schema of topic ${topic}`);
    const newest = registered.reduce((a, b) => (compareVersions(a.version, b.version) >= 0 ? a : b));
    const members = Object.fromEntries(registered.map((schema) => [schema.type, { schemaVersion: schema.versionText, schema: schema.schema }]));
    return { topic, schema: JSON.stringify(members), schemaVersion: newest.versionText };
  }
  const schema: ActiveSchema | null = isEventType(topic) ? await deps.schemas.current(topic) : null;
  if (!schema) throw problems.notFound(`topic or event type ${topic}`);
  return { topic, schema: JSON.stringify(schema.schema), schemaVersion: schema.versionText };
}

/** Every event type the platform knows of: the kernel's and each shipped module's declared ones. */
function knownTypes(catalogue: DeclaredEvents): string[] {
  const moduleTypes = catalogue.list().flatMap((manifest) => manifest.events.publishes);
  return [...new Set([...KERNEL_SCHEMAS.map((declaration) => declaration.type), ...moduleTypes])].sort();
}
