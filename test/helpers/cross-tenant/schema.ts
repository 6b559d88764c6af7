import { randomUUID } from 'node:crypto';

/**
 * Just enough of JSON Schema (as api/openapi/document.ts writes it from the routes' joi schemas) to
 * build a minimal valid value: required members with simple values, the first branch of a oneOf,
 * the `else` of an if/then/else (the audit intake's single record rather than its batch). It is not
 * a validator; the gateway's guard is, and an answer 400 that the control call shares shows where
 * this falls short (docs/cross-tenant.md, "Refused regardless of the id").
 */
export type Schema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  pattern?: string;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number | boolean;
  minItems?: number;
  minProperties?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  not?: Schema;
  if?: Schema;
  then?: Schema;
  else?: Schema;
};

export type Components = Record<string, Schema>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The schema with its $ref, allOf, if/then/else and first oneOf/anyOf branch folded in. */
export function resolve(schema: Schema | undefined, components: Components): Schema {
  if (!schema) return {};
  let current: Schema = schema.$ref ? resolve(components[schema.$ref.split('/').pop()!], components) : schema;
  if (current.if) current = merge(strip(current), resolve(current.else ?? current.then, components));
  for (const part of current.allOf ?? []) current = merge(current, resolve(part, components));
  // The first branch that asks for something (users.create: role_id, or roles, or neither).
  const branches = current.oneOf ?? current.anyOf;
  if (branches) {
    const branch = branches.find((candidate) => !candidate.not) ?? {};
    current = merge({ ...current, oneOf: undefined, anyOf: undefined }, resolve(branch, components));
  }
  return current;
}

function strip(schema: Schema): Schema {
  return { ...schema, if: undefined, then: undefined, else: undefined };
}

function merge(base: Schema, extra: Schema): Schema {
  return {
    ...base, ...extra,
    allOf: undefined,
    properties: { ...base.properties, ...extra.properties },
    required: [...new Set([...(base.required ?? []), ...(extra.required ?? [])])],
  };
}

const typeOf = (schema: Schema): string | undefined => (Array.isArray(schema.type) ? schema.type.find((type) => type !== 'null') : schema.type);

/** Whether a string passes the schema's own string rules (the ones an id must meet to reach a handler). */
export function acceptsString(schema: Schema, value: string): boolean {
  const type = typeOf(schema);
  if (type !== undefined && type !== 'string') return false;
  if (schema.enum && !schema.enum.includes(value)) return false;
  if (schema.format === 'uuid' && !UUID.test(value)) return false;
  if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value)) return false;
  if (schema.minLength !== undefined && value.length < schema.minLength) return false;
  return schema.maxLength === undefined || value.length <= schema.maxLength;
}

/**
 * Strings tried, in order, against a pattern: the shapes the platform's own patterns take (event
 * types and actions, currencies, durations, slugs).
 */
const PATTERN_CANDIDATES = ['x', 'USD', 'crm.contact.created', 'x.y', '2h', 'thumb', 'x1', '1', 'a-b', 'X'];

/** A minimal valid value of the schema; `fill` gives a member's value first (the id fields). */
export function minimalValue(
  schema: Schema | undefined, components: Components, fill: (name: string, schema: Schema) => unknown = () => undefined,
): unknown {
  const resolved = resolve(schema, components);
  if (resolved.const !== undefined) return resolved.const;
  if (resolved.default !== undefined) return resolved.default;
  if (resolved.enum) return resolved.enum.find((value) => value !== null);
  switch (typeOf(resolved)) {
    case 'object': {
      const value: Record<string, unknown> = {};
      for (const [name, member] of Object.entries(resolved.properties ?? {})) {
        const filled = fill(name, resolve(member, components));
        if (filled !== undefined) value[name] = filled;
        else if (resolved.required?.includes(name)) value[name] = minimalValue(member, components, fill);
      }
      // A body that must change something (a PATCH: at least one member) gets its first other members.
      for (const [name, member] of Object.entries(resolved.properties ?? {})) {
        if (Object.keys(value).length >= (resolved.minProperties ?? 0)) break;
        value[name] ??= minimalValue(member, components, fill);
      }
      return value;
    }
    case 'array':
      return Array.from({ length: Math.max(resolved.minItems ?? 0, 1) }, () => minimalValue(resolved.items, components, fill));
    case 'integer':
    case 'number':
      return resolved.minimum === undefined ? 1 : resolved.minimum + (resolved.exclusiveMinimum === true ? 1 : 0);
    case 'boolean':
      return false;
    case 'string':
      return minimalString(resolved);
    default:
      return 'x';
  }
}

function minimalString(schema: Schema): string {
  switch (schema.format) {
    case 'uuid': return randomUUID();
    case 'email': return `cross-tenant.${randomUUID()}@example.test`;
    case 'date-time': return new Date(Date.now() + 86_400_000).toISOString();
    case 'date': return new Date().toISOString().slice(0, 10);
    case 'uri': return 'https://example.test/x';
    default: break;
  }
  // An Idempotency-Key, an id: a pattern that takes a UUID is given a fresh one.
  const candidate = [...PATTERN_CANDIDATES, randomUUID()].find((value) => acceptsString(schema, value));
  return candidate ?? 'x'.repeat(Math.max(schema.minLength ?? 1, 1));
}
