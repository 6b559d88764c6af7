import type Joi from 'joi';
import OpenApi31Parser, { type JoiDescription, type JsonSchemaNode } from 'joi-to-json/lib/parsers/open-api-3.1';

/**
 * joi schemas as JSON Schema (OpenAPI 3.1 dialect): joi-to-json's parser, plus the joi rules it
 * leaves out. The guard validates with the joi schema and the document publishes this conversion,
 * so a rule missing here is a request the document calls valid and the guard refuses (found by the
 * API fuzzer, test/api/fuzz):
 *  - joi refuses '' for every string that does not `.allow('')` (string.empty): minLength 1;
 *  - `.trim()` checks the trimmed value, so such a string needs a non-blank character (\S);
 *  - `.guid({ version })` accepts only those UUID versions: a pattern on the version digit;
 *  - `object.min(n)` / `.max(n)` count keys: minProperties / maxProperties;
 *  - `object.pattern(keySchema, value)` (keys that match a schema, each value checked): joi-to-json
 *    reads only regex keys and publishes this one as an object that allows no key at all, so the
 *    document refused every answer that had one (found by the fuzzer on a file's thumbnails):
 *    propertyNames is the key's schema and additionalProperties the value's.
 *  - `Joi.number()` refuses a number beyond ±Number.MAX_SAFE_INTEGER (number.unsafe) unless
 *    `.unsafe()`: the bounds a rule leaves open are those (found by the fuzzer: a plan change's
 *    `version` of 3e23 was refused as OUT_OF_RANGE by a document that set no maximum).
 * A `.pattern()` with flags is refused (patternWithoutFlags).
 */
class PlatformSchemaParser extends OpenApi31Parser {
  override _setStringFieldProperties(fieldSchema: JsonSchemaNode, fieldDefn: JoiDescription): void {
    super._setStringFieldProperties(fieldSchema, fieldDefn);
    if (fieldSchema.type !== 'string') return;
    for (const rule of fieldDefn.rules ?? []) if (rule.name === 'pattern') patternWithoutFlags(rule.args?.regex);
    const emptyAllowed = (fieldDefn.allow ?? []).includes('') || (fieldDefn.flags as { empty?: unknown } | undefined)?.empty !== undefined;
    if (!emptyAllowed && fieldSchema.minLength === undefined) fieldSchema.minLength = 1;
    // `.trim()` validates the trimmed value: one that may not be empty needs a non-blank character.
    const trims = (fieldDefn.rules ?? []).some((rule) => rule.name === 'trim' && rule.args?.enabled !== false);
    if (trims && !emptyAllowed) addPattern(fieldSchema, '\\S');
    const versions = uuidVersionsOf(fieldDefn);
    if (versions) addPattern(fieldSchema, `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[${versions}][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$`);
  }

  override _setNumberFieldProperties(fieldSchema: JsonSchemaNode, fieldDefn: JoiDescription): void {
    super._setNumberFieldProperties(fieldSchema, fieldDefn);
    if (fieldSchema.type !== 'number' && fieldSchema.type !== 'integer') return;
    // `.unsafe()` lifts the bounds; `.valid(…)` names the only values (a const or an enum), which need none.
    const flags = fieldDefn.flags as { unsafe?: boolean; only?: boolean } | undefined;
    if (flags?.unsafe || flags?.only) return;
    const { minimum, maximum } = fieldSchema as { minimum?: number; maximum?: number };
    if (maximum === undefined || maximum > Number.MAX_SAFE_INTEGER) fieldSchema.maximum = Number.MAX_SAFE_INTEGER;
    if (minimum === undefined || minimum < -Number.MAX_SAFE_INTEGER) fieldSchema.minimum = -Number.MAX_SAFE_INTEGER;
  }

  override _setObjectProperties(schema: JsonSchemaNode, joiSpec: JoiDescription, definitions: Record<string, unknown>, level: number): void {
    super._setObjectProperties(schema, joiSpec, definitions, level);
    if (schema.type !== 'object') return;
    for (const rule of joiSpec.rules ?? []) {
      if (rule.name === 'min') schema.minProperties = rule.args?.limit;
      if (rule.name === 'max') schema.maxProperties = rule.args?.limit;
    }
    const keyed = ((joiSpec.patterns as ObjectPattern[] | undefined) ?? []).filter((pattern) => pattern.schema !== undefined);
    if (keyed.length > 1) throw new Error('an object with several key schemas cannot be published; give it one');
    for (const { schema: keys, rule } of keyed) {
      if (!isAnyString(keys)) schema.propertyNames = this.parse(keys!, definitions, level + 1);
      schema.additionalProperties = this.parse(rule, definitions, level + 1);
    }
  }
}

/** One `object.pattern(key, value)` as joi describes it: the key is a `regex` or a `schema`. */
interface ObjectPattern {
  regex?: string;
  schema?: JoiDescription;
  rule: JoiDescription;
}

/** `Joi.string()` with no rules: every JSON object key matches it. */
function isAnyString(description: JoiDescription | undefined): boolean {
  return description?.type === 'string' && (description.rules ?? []).length === 0 && description.allow === undefined;
}

/**
 * joi describes a pattern as `/source/flags`, and joi-to-json publishes `source/flags` when there
 * are flags (`^[^\p{Cc}]+$/u`): no OpenAPI tool reads that, and without its flags the source may
 * mean something else (`\p{Cc}` needs u). A documented pattern is ECMA-262 without flags, so a
 * flagged one stops the document's build, as a broken route definition stops the registry.
 */
function patternWithoutFlags(described: unknown): void {
  if (typeof described !== 'string') return;
  const flags = described.slice(described.lastIndexOf('/') + 1);
  if (flags) throw new Error(`pattern ${described}: a documented pattern carries no flags; write it without (${flags})`);
}

/** A string schema has one `pattern`; a further one joins it through allOf. */
function addPattern(fieldSchema: JsonSchemaNode, pattern: string): void {
  if (fieldSchema.pattern === undefined) fieldSchema.pattern = pattern;
  else fieldSchema.allOf = [...((fieldSchema.allOf as unknown[] | undefined) ?? []), { pattern }];
}

/** '47' for `.guid({ version: ['uuidv4', 'uuidv7'] })`; undefined when any version goes. */
function uuidVersionsOf(fieldDefn: JoiDescription): string | undefined {
  const rule = (fieldDefn.rules ?? []).find((r) => r.name === 'guid' || r.name === 'uuid');
  const version = (rule?.args?.options as { version?: string | string[] } | undefined)?.version;
  if (version === undefined) return undefined;
  return [version].flat().map((v) => v.replace(/^uuidv/, '')).join('');
}

export function toJsonSchema(schema: Joi.Schema): Record<string, unknown> {
  return new PlatformSchemaParser().parse(schema.describe());
}
