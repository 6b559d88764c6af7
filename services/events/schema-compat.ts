import { canonicalJson } from '../../common/canonical-json';
import { SCHEMA_VERSION_PATTERN } from './event-rules';

/**
 * Event payload schemas (docs/reference/events.md#rule-6: every type has one) and the rule
 * that a registered type never changes incompatibly (docs/reference/events.md#rule-8). A schema is JSON Schema text in
 * a small dialect whose every keyword has a known compatibility meaning, so whether a change breaks
 * a consumer is decided here, mechanically, and not by review:
 *
 *   object:  type "object", properties, required, additionalProperties (boolean)
 *   field:   type (one name, or a list of names including "null"), format, enum, items (arrays),
 *            properties / required / additionalProperties (nested objects)
 *   anywhere: title, description (documentation only)
 *
 * Compatible means both ways: a payload valid under the old schema is valid under the new one (old
 * publishers keep working) and a consumer written for the old schema still finds every field it
 * read, with the same type (consumers are tolerant readers: they ignore members they do not know).
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type EventSchema = { [key: string]: JsonValue };

export const TYPE_NAMES = ['string', 'integer', 'number', 'boolean', 'object', 'array', 'null'] as const;
export const FORMATS = ['uuid', 'date-time', 'date', 'email', 'uri'] as const;
const DOC_KEYWORDS = ['title', 'description'];
const KEYWORDS = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'format', 'enum', ...DOC_KEYWORDS]);

/** The schema of a type declared without one: any JSON object (docs/decisions/events.md). */
export const ANY_OBJECT_SCHEMA: EventSchema = { type: 'object', additionalProperties: true };

/** Equal as JSON, whatever the key order (a schema read back from jsonb has its keys reordered). */
const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a ?? null) === canonicalJson(b ?? null);

const isObject = (value: unknown): value is Record<string, JsonValue> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The type names a (sub)schema admits; an absent `type` admits anything and is refused by the dialect. */
function typesOf(schema: Record<string, JsonValue>): string[] {
  const type = schema.type;
  return (Array.isArray(type) ? type : [type]).map((name) => (typeof name === 'string' ? name : JSON.stringify(name ?? null))).sort();
}

/** Every way a schema leaves the dialect, by JSON path; empty when it is a usable event schema. */
export function eventSchemaProblems(schema: unknown): string[] {
  if (!isObject(schema)) return ['$: a schema is a JSON object'];
  const problems = fieldProblems(schema, '$');
  if (!sameJson(typesOf(schema), ['object'])) problems.unshift('$: an event payload is an object (type "object")');
  return problems;
}

function fieldProblems(schema: Record<string, JsonValue>, at: string): string[] {
  const problems: string[] = [];
  for (const keyword of Object.keys(schema)) if (!KEYWORDS.has(keyword)) problems.push(`${at}: keyword ${keyword} is not supported`);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (schema.type === undefined || types.length === 0 || !types.every((type) => (TYPE_NAMES as readonly JsonValue[]).includes(type))) {
    problems.push(`${at}: type must be one of ${TYPE_NAMES.join(', ')}, or a list of them`);
  }
  if (schema.format !== undefined && !(FORMATS as readonly JsonValue[]).includes(schema.format)) {
    problems.push(`${at}: format must be one of ${FORMATS.join(', ')}`);
  }
  if (schema.enum !== undefined && (!Array.isArray(schema.enum) || schema.enum.length === 0 || schema.enum.some((v) => isObject(v) || Array.isArray(v)))) {
    problems.push(`${at}: enum is a non-empty list of strings, numbers, booleans or null`);
  }
  for (const keyword of DOC_KEYWORDS) {
    if (schema[keyword] !== undefined && typeof schema[keyword] !== 'string') problems.push(`${at}: ${keyword} is a string`);
  }
  if (schema.additionalProperties !== undefined && typeof schema.additionalProperties !== 'boolean') {
    problems.push(`${at}: additionalProperties is true or false`);
  }
  if (schema.properties !== undefined) {
    if (!isObject(schema.properties)) problems.push(`${at}: properties is an object`);
    else {
      for (const [name, property] of Object.entries(schema.properties)) {
        if (isObject(property)) problems.push(...fieldProblems(property, `${at}.${name}`));
        else problems.push(`${at}.${name}: a property's schema is an object`);
      }
    }
  }
  if (schema.required !== undefined) {
    const declared = isObject(schema.properties) ? schema.properties : {};
    if (!Array.isArray(schema.required) || schema.required.some((name) => typeof name !== 'string')) problems.push(`${at}: required is a list of names`);
    else for (const name of schema.required as string[]) if (!Object.hasOwn(declared, name)) problems.push(`${at}: required ${name} is not among properties`);
  }
  if (schema.items !== undefined) {
    if (isObject(schema.items)) problems.push(...fieldProblems(schema.items, `${at}[]`));
    else problems.push(`${at}: items is an object`);
  }
  return problems;
}

/** How a change between two schemas affects publishers and consumers. */
export type ChangeKind = 'breaking' | 'additive' | 'cosmetic';

export interface SchemaChange {
  kind: ChangeKind;
  /** JSON path of the changed (sub)schema, `$.address.city`. */
  path: string;
  message: string;
}

const requiredOf = (schema: Record<string, JsonValue>): Set<string> =>
  new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);

const formatOf = (schema: Record<string, JsonValue>): string => (typeof schema.format === 'string' ? schema.format : 'none');

const enumKey = (values: JsonValue) => (Array.isArray(values) ? values.map((v) => JSON.stringify(v)).sort() : null);

/** Every difference between two schemas of the dialect, classified. */
export function schemaChanges(before: EventSchema, after: EventSchema): SchemaChange[] {
  return fieldChanges(before, after, '$');
}

function fieldChanges(before: Record<string, JsonValue>, after: Record<string, JsonValue>, at: string): SchemaChange[] {
  const changes: SchemaChange[] = [];
  const change = (kind: ChangeKind, message: string, path = at) => changes.push({ kind, path, message });

  if (!sameJson(typesOf(before), typesOf(after))) {
    change('breaking', `type changed from ${typesOf(before).join('|')} to ${typesOf(after).join('|')}`);
    return changes;
  }
  // A format or an enum added narrows what publishers may send; removed, it widens what consumers receive.
  if (before.format !== after.format) change('breaking', `format changed from ${formatOf(before)} to ${formatOf(after)}`);
  if (!sameJson(enumKey(before.enum), enumKey(after.enum))) change('breaking', 'enum values changed');
  for (const keyword of DOC_KEYWORDS) if (before[keyword] !== after[keyword]) change('cosmetic', `${keyword} changed`);

  const open = (schema: Record<string, JsonValue>) => schema.additionalProperties !== false;
  if (open(before) && !open(after)) change('breaking', 'additionalProperties closed: members publishers sent are refused');
  if (!open(before) && open(after)) change('additive', 'additionalProperties opened');

  const beforeProps = isObject(before.properties) ? before.properties : {};
  const afterProps = isObject(after.properties) ? after.properties : {};
  const beforeRequired = requiredOf(before);
  const afterRequired = requiredOf(after);
  for (const [name, schema] of Object.entries(beforeProps)) {
    const path = `${at}.${name}`;
    if (!Object.hasOwn(afterProps, name)) change('breaking', 'field removed: consumers that read it break', path);
    else changes.push(...fieldChanges(schema as Record<string, JsonValue>, afterProps[name] as Record<string, JsonValue>, path));
    if (beforeRequired.has(name) && !afterRequired.has(name) && Object.hasOwn(afterProps, name)) {
      change('breaking', 'field made optional: consumers that rely on it break', path);
    }
    if (!beforeRequired.has(name) && afterRequired.has(name)) change('breaking', 'field made required: old payloads lack it', path);
  }
  for (const name of Object.keys(afterProps)) {
    if (Object.hasOwn(beforeProps, name)) continue;
    const path = `${at}.${name}`;
    if (afterRequired.has(name)) change('breaking', 'required field added: old payloads lack it', path);
    else change('additive', 'optional field added', path);
  }
  if (isObject(before.items) && isObject(after.items)) changes.push(...fieldChanges(before.items, after.items, `${at}[]`));
  else if (isObject(before.items) !== isObject(after.items)) change('breaking', 'items schema added or removed');
  return changes;
}

export interface Version {
  major: number;
  minor: number;
  patch: number;
}

export function parseVersion(text: string): Version | null {
  if (!SCHEMA_VERSION_PATTERN.test(text)) return null;
  const [major, minor, patch] = text.split('.').map(Number);
  return { major, minor, patch };
}

export function compareVersions(a: Version, b: Version): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

export const formatVersion = ({ major, minor, patch }: Version) => `${major}.${minor}.${patch}`;

export interface SchemaVersionText {
  version: string;
  schema: EventSchema;
}

/**
 * Whether `next` may be registered under a type whose current schema is `current`:
 * - the first schema of a type is registered as it is;
 * - the same version with the same schema is nothing to do (a module installed again);
 * - otherwise the version must grow, and the change must not be breaking (a breaking change needs
 *   a new event type, docs/reference/events.md#rule-8), so a new major version is refused as well;
 * - an added optional field (or members admitted) needs a new minor version; a change of titles and
 *   descriptions only needs a patch.
 */
export type SchemaRegistration =
  | { outcome: 'new' | 'unchanged' | 'upgrade' }
  | { outcome: 'refused'; reasons: string[] };

export function checkSchemaChange(current: SchemaVersionText | null, next: SchemaVersionText): SchemaRegistration {
  const nextVersion = parseVersion(next.version);
  if (!nextVersion) return { outcome: 'refused', reasons: [`version ${next.version} is not a semantic version such as 1.0.0`] };
  const dialect = eventSchemaProblems(next.schema);
  if (dialect.length > 0) return { outcome: 'refused', reasons: dialect };
  if (!current) return { outcome: 'new' };

  const currentVersion = parseVersion(current.version)!;
  const order = compareVersions(nextVersion, currentVersion);
  const same = sameJson(current.schema, next.schema);
  if (order === 0) {
    return same ? { outcome: 'unchanged' } : { outcome: 'refused', reasons: [`version ${next.version} is registered with another schema; give the change a new version`] };
  }
  if (order < 0) return { outcome: 'refused', reasons: [`version ${next.version} is older than the registered ${current.version}`] };

  const changes = schemaChanges(current.schema, next.schema);
  const breaking = changes.filter((change) => change.kind === 'breaking');
  if (breaking.length > 0) {
    return {
      outcome: 'refused',
      reasons: [...breaking.map((change) => `${change.path}: ${change.message}`), 'a breaking change needs a new event type'],
    };
  }
  if (nextVersion.major !== currentVersion.major) {
    return { outcome: 'refused', reasons: [`a new major version (${next.version}) announces a breaking change, which needs a new event type`] };
  }
  if (changes.some((change) => change.kind === 'additive') && nextVersion.minor === currentVersion.minor) {
    const minimum = formatVersion({ ...currentVersion, minor: currentVersion.minor + 1, patch: 0 });
    return { outcome: 'refused', reasons: [`the change adds fields: it needs a new minor version (${minimum} or later), not ${next.version}`] };
  }
  return { outcome: 'upgrade' };
}
