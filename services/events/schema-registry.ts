import { z } from 'zod';
import { problems, type FieldError } from '../../common/problems';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { insertSchemaVersions, lockSchemaTypes, selectCurrentSchemas, type NewSchemaVersion } from '../../db/queries/events/schemas.queries';
import { KERNEL_OWNER, KERNEL_SCHEMAS, type SchemaDeclaration } from './kernel-schemas';
import { checkSchemaChange, parseVersion, type EventSchema, type Version } from './schema-compat';

/**
 * The registry of event payload schemas (docs/reference/events.md#rule-6 and #rule-7: every event type has a
 * typed payload schema with a semantic version). The kernel's schemas are registered by the gateway at
 * start-up, a module's when a tenant installs it (services/modules/module-registry.ts). A version is added
 * only if schema-compat finds it backward compatible with the type's current one; a type belongs
 * to the owner that registered it first.
 */

/** What a registration added, by type; `unchanged` types were registered already in that version. */
export interface RegistrationSummary {
  added: string[];
  unchanged: string[];
}

/**
 * Registers the declarations in the caller's transaction, all or nothing: any refused change
 * (another owner's type, a breaking change, a version that does not fit the change) throws
 * 409 event-schema-incompatible naming every reason, and nothing is written.
 */
export async function registerSchemas(
  tx: DatabaseTransactionConnection, owner: string, declarations: readonly SchemaDeclaration[],
): Promise<RegistrationSummary> {
  const summary: RegistrationSummary = { added: [], unchanged: [] };
  if (declarations.length === 0) return summary;
  const types = declarations.map((declaration) => declaration.type);
  await lockSchemaTypes(tx, types);
  const current = new Map((await selectCurrentSchemas(tx, types)).map((row) => [row.type, row]));
  const refused: string[] = [];
  const rows: NewSchemaVersion[] = [];
  for (const declaration of declarations) {
    const registered = current.get(declaration.type) ?? null;
    if (registered && registered.owner !== owner) {
      refused.push(`${declaration.type} is registered by ${registered.owner}, not ${owner}`);
      continue;
    }
    const check = checkSchemaChange(registered && { version: registered.version, schema: registered.schema as EventSchema }, declaration);
    if (check.outcome === 'refused') refused.push(...check.reasons.map((reason) => `${declaration.type} ${declaration.version}: ${reason}`));
    else if (check.outcome === 'unchanged') summary.unchanged.push(declaration.type);
    else {
      rows.push({ type: declaration.type, ...parseVersion(declaration.version)!, schema: declaration.schema, owner });
      summary.added.push(declaration.type);
    }
  }
  if (refused.length > 0) throw problems.eventSchemaIncompatible(refused);
  await insertSchemaVersions(tx, rows);
  return summary;
}

/** The kernel's schemas (kernel-schemas.ts), registered once per gateway start; a no-op when they are. */
export function registerKernelSchemas(db: DatabasePool): Promise<RegistrationSummary> {
  return db.transaction((tx) => registerSchemas(tx, KERNEL_OWNER, KERNEL_SCHEMAS));
}

/** A type's current schema, ready to check payloads. */
export interface ActiveSchema {
  type: string;
  version: Version;
  versionText: string;
  /** The JSON Schema text as registered (GetTopicSchema renders it). */
  schema: EventSchema;
  validator: z.ZodType;
}

interface Entry {
  schema: ActiveSchema;
  loadedAt: number;
}

/**
 * The gateway's read side of the registry: a type's current schema, loaded on first use and reused
 * for EVENTS_SCHEMA_CACHE_TTL_MS. Schemas change only when a module of a newer version is
 * installed; until the TTL runs out a gateway checks payloads against the previous version, which
 * the new one is compatible with. A type without a schema is not remembered, so its first
 * registration counts at once.
 */
export class SchemaRegistry {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly db: DatabasePool, private readonly ttlMs: number, private readonly now: () => number = Date.now) {}

  async current(type: string): Promise<ActiveSchema | null> {
    const entry = this.entries.get(type);
    if (entry && this.now() - entry.loadedAt < this.ttlMs) return entry.schema;
    const [row] = await selectCurrentSchemas(this.db, [type]);
    if (!row) return null;
    const schema = compile(row.type, row.version, row.schema as EventSchema);
    this.entries.set(type, { schema, loadedAt: this.now() });
    return schema;
  }
}

function compile(type: string, versionText: string, schema: EventSchema): ActiveSchema {
  return { type, version: parseVersion(versionText)!, versionText, schema, validator: z.fromJSONSchema(schema) };
}

/** The payload's mismatches with the schema, as field errors under `data` (empty when it matches). */
export function payloadErrors(schema: ActiveSchema, data: unknown): FieldError[] {
  const result = schema.validator.safeParse(data);
  if (result.success) return [];
  return result.error.issues.flatMap((issue) => {
    const field = ['data', ...issue.path.map(String)].join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: `${field}.${key}`, code: 'UNKNOWN_FIELD', message: `${key} is not a field of ${schema.type} ${schema.versionText}` }));
    }
    if (valueAt(data, issue.path) === undefined) return [{ field, code: 'REQUIRED', message: `${field} is required by ${schema.type} ${schema.versionText}` }];
    return [{ field, code: issue.code === 'invalid_format' ? 'INVALID_FORMAT' : issue.code === 'invalid_value' ? 'INVALID_VALUE' : 'INVALID_TYPE', message: issue.message }];
  });
}

/** The member of a parsed payload at a validation issue's path (undefined when it is missing). */
function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let value = data;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
