import Joi from 'joi';
import { DEFAULT_SCHEMA_VERSION, EVENT_TYPE_PATTERN, SCHEMA_VERSION_PATTERN } from '../events/event-rules';
import type { SchemaDeclaration } from '../events/kernel-schemas';
import { ANY_OBJECT_SCHEMA, eventSchemaProblems, type EventSchema } from '../events/schema-compat';

/**
 * A module manifest (docs/decisions/modules.md, Manifests): what a module is called, the
 * permission keys it registers when a tenant installs it, its models (for the automatic data
 * API), its hooks and the event types it publishes and subscribes to. Manifests ship with the
 * project under `modules/<slug>/manifest.json` and are checked here once, at start-up.
 */

/** `file`: the id of a file of the files service, stored as a uuid (no foreign key: the files live in another service's table). */
export const FIELD_TYPES = ['text', 'integer', 'bigint', 'numeric', 'boolean', 'uuid', 'jsonb', 'timestamptz', 'date', 'file'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const HOOK_EVENTS = ['beforeCreate', 'afterCreate', 'beforeUpdate', 'afterUpdate', 'beforeDelete', 'afterDelete'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** The actions of the data layer's keys `{module}.{model}.{action}` (docs/reference/modules.md#rule-3). */
export const DATA_ACTIONS = ['read', 'create', 'update', 'delete'] as const;

export interface FieldDefinition {
  type: FieldType;
  /** Default true: only a field declared `nullable: false` is required. */
  nullable: boolean;
  /** A foreign key to another model of the same module: always its id (`companies.id`). */
  references?: { model: string; field: string };
}

export interface ModelDefinition {
  /** Served by the automatic data API (`/v1/data/{module}/{model}`), with its permission keys registered. */
  autoApi: boolean;
  fields: Record<string, FieldDefinition>;
}

export interface ModuleHook {
  model: string;
  on: HookEvent;
  /** The name of the handler the module provides (run by the data layer). */
  handler: string;
}

export interface ModulePermission {
  key: string;
  description: string;
}

/** The payload schema of a type the module publishes: JSON Schema in the registry's dialect (services/events/schema-compat.ts). */
export interface DeclaredEventSchema {
  version: string;
  schema: EventSchema;
}

export interface ModuleManifest {
  slug: string;
  name: string;
  version: string;
  description: string;
  /** The declared keys, plus the four data-layer keys of every autoApi model the manifest did not declare. */
  permissions: ModulePermission[];
  models: Record<string, ModelDefinition>;
  hooks: ModuleHook[];
  events: { publishes: string[]; subscribes: string[] };
  /**
   * Payload schemas by published type (docs/decisions/events.md); a type published without one is
   * registered as "any JSON object" in version 1.0.0.
   */
  eventSchemas?: Record<string, DeclaredEventSchema>;
}

/**
 * Slugs a module may not take: the platform's reserved key prefixes (docs/reference/access.md#rule-2)
 * and the kernel event namespaces (docs/reference/events.md#rule-4), whose keys and events belong to the platform.
 * The first segments of the system keys (users, roles ...) are refused by the database at install
 * (trigger permissions_check_module), where their one list lives.
 */
export const RESERVED_SLUGS = ['system', 'platform', 'auth', 'money', 'billing', 'audit'];

/** Usable as an event type's first segment, a permission key's first segment and a path segment. */
export const SLUG_PATTERN = /^[a-z][a-z0-9_]{0,49}$/;
const MODEL_NAME = /^[a-z][a-z0-9_]{0,62}$/;
const FIELD_NAME = /^[a-z][a-zA-Z0-9]{0,62}$/;
/** The same grammar as the permissions table's CHECK constraint (migration 0010). */
const PERMISSION_KEY = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$/;
/** Columns every model has; the data layer manages them. */
const IMPLICIT_FIELDS = ['id', 'tenantId', 'createdAt', 'updatedAt', 'deletedAt'];
/** `/data/{module}/models` is the introspection route, so no model may take that path segment. */
const RESERVED_MODEL_NAMES = ['models'];

/** Limits from configuration a manifest is checked against. */
export interface ManifestLimits {
  /** DATA_MAX_TABLES_PER_MODULE (docs/reference/data.md, Limits): every model is a table. */
  maxModels: number;
}

const field = Joi.object<FieldDefinition>({
  type: Joi.string().valid(...FIELD_TYPES).required(),
  nullable: Joi.boolean().default(true),
  references: Joi.object({ model: Joi.string().pattern(MODEL_NAME).required(), field: Joi.string().required() }),
});

const model = Joi.object<ModelDefinition>({
  autoApi: Joi.boolean().default(false),
  fields: Joi.object().pattern(Joi.string().pattern(FIELD_NAME).invalid(...IMPLICIT_FIELDS), field).min(1).required(),
});

const manifestShape = Joi.object<ModuleManifest>({
  slug: Joi.string().pattern(SLUG_PATTERN).invalid(...RESERVED_SLUGS).required(),
  name: Joi.string().trim().min(1).max(100).required(),
  version: Joi.string().pattern(SCHEMA_VERSION_PATTERN, 'semantic version').required(),
  description: Joi.string().max(1000).allow('').default(''),
  permissions: Joi.array().items(Joi.object<ModulePermission>({
    key: Joi.string().max(200).pattern(PERMISSION_KEY, 'permission key').required(),
    description: Joi.string().max(500).allow('').default(''),
  })).unique('key').default([]),
  models: Joi.object().pattern(Joi.string().pattern(MODEL_NAME), model).default({}),
  hooks: Joi.array().items(Joi.object<ModuleHook>({
    model: Joi.string().required(),
    on: Joi.string().valid(...HOOK_EVENTS).required(),
    handler: Joi.string().pattern(/^[A-Za-z][A-Za-z0-9_.-]{0,99}$/).required(),
  })).default([]),
  events: Joi.object({
    publishes: Joi.array().items(Joi.string().pattern(EVENT_TYPE_PATTERN, 'event type')).unique().default([]),
    subscribes: Joi.array().items(Joi.string().pattern(EVENT_TYPE_PATTERN, 'event type')).unique().default([]),
  }).default({ publishes: [], subscribes: [] }),
  eventSchemas: Joi.object().pattern(Joi.string().pattern(EVENT_TYPE_PATTERN, 'event type'), Joi.object<DeclaredEventSchema>({
    version: Joi.string().pattern(SCHEMA_VERSION_PATTERN, 'semantic version').required(),
    schema: Joi.object().unknown(true).required(),
  })).default({}),
});

/** The rules that relate one part of a manifest to another; every broken one is named. */
function crossChecks(manifest: ModuleManifest, limits: ManifestLimits): string[] {
  const problems: string[] = [];
  const modelCount = Object.keys(manifest.models).length;
  if (modelCount > limits.maxModels) problems.push(`models: ${modelCount} models, at most ${limits.maxModels} per module (one table each)`);
  for (const name of RESERVED_MODEL_NAMES) {
    if (Object.hasOwn(manifest.models, name)) problems.push(`models.${name}: the name is reserved (GET /data/{module}/${name} is the model description)`);
  }
  const prefix = `${manifest.slug}.`;
  manifest.permissions.forEach(({ key }, index) => {
    if (key.startsWith('system.') || key.startsWith('platform.')) problems.push(`permissions[${index}].key ${key} is reserved for the platform`);
    else if (!key.startsWith(prefix)) problems.push(`permissions[${index}].key ${key} must start with ${prefix}`);
  });
  for (const [modelName, { fields }] of Object.entries(manifest.models)) problems.push(...referenceProblems(manifest, modelName, fields));
  problems.push(...ambiguousRelations(manifest));
  manifest.hooks.forEach((hook, index) => {
    if (!manifest.models[hook.model]) problems.push(`hooks[${index}].model ${hook.model} is not declared`);
  });
  manifest.events.publishes.forEach((type, index) => {
    if (!type.startsWith(prefix)) problems.push(`events.publishes[${index}] ${type} must start with ${prefix}`);
  });
  for (const [type, { schema }] of Object.entries(manifest.eventSchemas ?? {})) {
    if (!manifest.events.publishes.includes(type)) problems.push(`eventSchemas.${type}: the type is not in events.publishes`);
    problems.push(...eventSchemaProblems(schema).map((problem) => `eventSchemas.${type}: ${problem}`));
  }
  return problems;
}

/**
 * A reference is a foreign key that includes the tenant, `(tenant_id, field) → target (tenant_id, id)`,
 * so it can only name the target's id, and is a uuid.
 */
function referenceProblems(manifest: ModuleManifest, modelName: string, fields: Record<string, FieldDefinition>): string[] {
  const problems: string[] = [];
  for (const [fieldName, { type, references }] of Object.entries(fields)) {
    if (!references) continue;
    const where = `models.${modelName}.fields.${fieldName}.references`;
    if (!Object.hasOwn(manifest.models, references.model)) problems.push(`${where}: model ${references.model} is not declared`);
    else if (references.field !== 'id') problems.push(`${where}: ${references.model}.${references.field} cannot be referenced, only ${references.model}.id`);
    else if (type !== 'uuid') problems.push(`${where}: ${references.model}.id is not a ${type} field of the model`);
  }
  return problems;
}

/**
 * `select=` names a relation by its other model (docs/reference/modules.md#rule-2): the models a
 * model references and the models referencing it must all differ, or an embed would be ambiguous
 * (two references to one target, a reference to itself, or two models referencing each other).
 */
function ambiguousRelations(manifest: ModuleManifest): string[] {
  // model → other model → the reference fields relating them (`contacts.companyId`)
  const relations = new Map<string, Map<string, string[]>>();
  const relate = (model: string, other: string, by: string) => {
    const ofModel = relations.get(model) ?? new Map<string, string[]>();
    relations.set(model, ofModel.set(other, [...(ofModel.get(other) ?? []), by]));
  };
  for (const [modelName, { fields }] of Object.entries(manifest.models)) {
    for (const [fieldName, { references }] of Object.entries(fields)) {
      if (!references || !Object.hasOwn(manifest.models, references.model)) continue;
      relate(modelName, references.model, `${modelName}.${fieldName}`);
      relate(references.model, modelName, `${modelName}.${fieldName}`);
    }
  }
  return [...relations].flatMap(([model, others]) => [...others]
    .filter(([, by]) => by.length > 1)
    .map(([other, by]) => `models.${model}: its relations to ${other} (${by.join(', ')}) would be ambiguous in select=; keep one reference`));
}

/**
 * docs/reference/modules.md#rule-3: every autoApi model gets its data-layer keys registered, and
 * `.write` (create and update; docs/decisions/data.md, Records), so a role can be given it; a key the manifest
 * declares itself keeps its own description.
 */
function withDataPermissions(manifest: ModuleManifest): ModulePermission[] {
  const declared = new Set(manifest.permissions.map((p) => p.key));
  const derived = Object.entries(manifest.models)
    .filter(([, definition]) => definition.autoApi)
    .flatMap(([modelName]) => [
      ...DATA_ACTIONS.map((action) => ({ key: `${manifest.slug}.${modelName}.${action}`, description: `${action} ${modelName}` })),
      { key: `${manifest.slug}.${modelName}.write`, description: `create and update ${modelName}` },
    ])
    .filter((permission) => !declared.has(permission.key));
  return [...manifest.permissions, ...derived];
}

/** The schema of every type the module publishes, as the registry takes them (installModule registers them). */
export function publishedSchemas(manifest: ModuleManifest): SchemaDeclaration[] {
  return manifest.events.publishes.map((type) => ({
    type, ...(manifest.eventSchemas?.[type] ?? { version: DEFAULT_SCHEMA_VERSION, schema: ANY_OBJECT_SCHEMA }),
  }));
}

export type ManifestCheck = { ok: true; manifest: ModuleManifest } | { ok: false; problems: string[] };

/** Checks a parsed manifest; `folder` is the folder it came from, which the manifest's slug must equal. */
export function checkManifest(input: unknown, folder: string, limits: ManifestLimits): ManifestCheck {
  const checked = manifestShape.validate(input, { abortEarly: false, errors: { wrap: { label: false } } });
  if (checked.error) return { ok: false, problems: checked.error.details.map((detail) => detail.message) };
  const { value } = checked;
  const problems = crossChecks(value, limits);
  if (value.slug !== folder) problems.unshift(`slug ${value.slug} differs from its folder modules/${folder}`);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, manifest: { ...value, permissions: withDataPermissions(value) } };
}
