/**
 * The data layer's models as the SQL of db/queries/data/ reads them (issue 16): one table per model
 * of a module manifest, in the module's own schema, with the system columns every record has. The
 * service (services/data/) builds these from the manifests; nothing here knows a manifest.
 */

/** The manifest's field types (services/modules/manifest.ts FIELD_TYPES) plus `file`, a files-service reference. */
export type DataFieldType = 'text' | 'integer' | 'bigint' | 'numeric' | 'boolean' | 'uuid' | 'timestamptz' | 'date' | 'jsonb' | 'file';

export interface DataField {
  /** The name clients use in bodies and the query language (`firstName`, `createdAt`). */
  name: string;
  /** The table's column: the field name itself for module fields, snake_case for the system columns. */
  column: string;
  type: DataFieldType;
  nullable: boolean;
  /** id, tenantId, createdAt, updatedAt, deletedAt: managed by the data layer, never taken from a client. */
  system: boolean;
  /** A many-to-one reference to another model of the same module (always its id). */
  references?: string;
}

/** A relation as `select=` names it: by the target model (docs/reference/data.md#rule-17). */
export interface DataRelation {
  /** The target model's name. */
  name: string;
  /** many-to-one: this model holds the reference (embedded as an object); one-to-many: the target does (an array). */
  cardinality: 'one' | 'many';
  /** The column of this model's table the relation joins on (`companyId` for one, `id` for many). */
  localColumn: string;
  /** The column of the target's table (`id` for one, `companyId` for many). */
  remoteColumn: string;
}

export interface DataModel {
  module: string;
  name: string;
  /** The module's schema, `mod_<slug>`. */
  schema: string;
  /** The table, the model's name. */
  table: string;
  /** System fields first (id, tenantId, createdAt, updatedAt, deletedAt), then the manifest's, in its order. */
  fields: readonly DataField[];
  relations: readonly DataRelation[];
}

/** The system fields, in the order every table has them. */
export const SYSTEM_FIELDS: readonly DataField[] = [
  { name: 'id', column: 'id', type: 'uuid', nullable: false, system: true },
  { name: 'tenantId', column: 'tenant_id', type: 'uuid', nullable: false, system: true },
  { name: 'createdAt', column: 'created_at', type: 'timestamptz', nullable: false, system: true },
  { name: 'updatedAt', column: 'updated_at', type: 'timestamptz', nullable: false, system: true },
  { name: 'deletedAt', column: 'deleted_at', type: 'timestamptz', nullable: true, system: true },
];

/** The module's schema name (slugs are `^[a-z][a-z0-9_]{0,49}$`, so this is a plain identifier). */
export function moduleSchema(slug: string): string {
  return `mod_${slug}`;
}
