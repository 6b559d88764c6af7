import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';
import type { DataField, DataFieldType, DataModel } from './model';

/**
 * The DDL of the data layer's tables (issue 16, docs/decisions/data.md) and the registry of what was
 * applied (data_models, migration 0026). Everything runs as the owner role inside the provisioning
 * transaction (services/data/provision.ts). These statements work on the schema, not on a tenant's
 * rows, so no tenant id is named; the tables they create are the ones that then scope every row.
 *
 * DDL takes no bind parameters: every name goes through sql.identifier (the manifest grammar also
 * limits names to letters, digits and _), and every type comes from the fixed map below.
 */

/** One field as the registry keeps it: the manifest's definition. */
export interface AppliedField {
  type: DataFieldType;
  nullable: boolean;
  references?: { model: string; field: string };
}

export interface AppliedModel {
  model: string;
  fields: Record<string, AppliedField>;
  version: string;
}

const appliedFieldRow = z.object({
  type: z.enum(['text', 'integer', 'bigint', 'numeric', 'boolean', 'uuid', 'timestamptz', 'date', 'jsonb', 'file']),
  nullable: z.boolean(),
  references: z.object({ model: z.string(), field: z.string() }).optional(),
});
const appliedModelRow = z.object({ model: z.string(), fields: z.record(z.string(), appliedFieldRow), version: z.string() });

/** `file` is the id of a files-service file: a uuid without a foreign key (the files live in another service's table). */
const COLUMN_TYPES: Record<DataFieldType, ReturnType<typeof sql.fragment>> = {
  text: sql.fragment`text`,
  integer: sql.fragment`integer`,
  bigint: sql.fragment`bigint`,
  numeric: sql.fragment`numeric`,
  boolean: sql.fragment`boolean`,
  uuid: sql.fragment`uuid`,
  timestamptz: sql.fragment`timestamptz`,
  date: sql.fragment`date`,
  jsonb: sql.fragment`jsonb`,
  file: sql.fragment`uuid`,
};

/** A constant derived from a readable name, so it cannot collide with another lock by accident. */
const PROVISION_LOCK = sql.fragment`hashtextextended('platform:data-provision', 0)`;

/** Two provisioning runs (two processes starting at once) take turns: the second sees what the first applied. */
export async function lockProvisioning(tx: DatabaseTransactionConnection): Promise<void> {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${PROVISION_LOCK})`);
}

/** What was applied of the module's models, by model. */
export async function selectAppliedModels(tx: DatabaseTransactionConnection, module: string): Promise<Map<string, AppliedModel>> {
  const rows = await tx.any(sql.type(appliedModelRow)`
    SELECT model, fields, version FROM data_models WHERE module = ${module} ORDER BY model
  `);
  return new Map(rows.map((row) => [row.model, row]));
}

export async function upsertAppliedModel(tx: DatabaseTransactionConnection, module: string, applied: AppliedModel): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO data_models (module, model, fields, version)
    VALUES (${module}, ${applied.model}, ${sql.jsonb(applied.fields)}, ${applied.version})
    ON CONFLICT (module, model) DO UPDATE SET fields = EXCLUDED.fields, version = EXCLUDED.version, applied_at = now()
  `);
}

/** The module's schema; the application role may only reach the tables granted to it inside. */
export async function createModuleSchema(tx: DatabaseTransactionConnection, schema: string): Promise<void> {
  await tx.query(sql.unsafe`CREATE SCHEMA IF NOT EXISTS ${sql.identifier([schema])}`);
  await tx.query(sql.unsafe`GRANT USAGE ON SCHEMA ${sql.identifier([schema])} TO platform_app`);
}

const tableOf = (model: Pick<DataModel, 'schema' | 'table'>) => sql.identifier([model.schema, model.table]);

/** The timestamps an INSERT may leave to the database (module field names have no underscore, so cannot collide). */
const COLUMN_DEFAULTS: Partial<Record<string, ReturnType<typeof sql.fragment>>> = {
  created_at: sql.fragment` DEFAULT now()`,
  updated_at: sql.fragment` DEFAULT now()`,
};

function columnDefinition(field: DataField) {
  return sql.fragment`${sql.identifier([field.column])} ${COLUMN_TYPES[field.type]}${field.nullable ? sql.fragment`` : sql.fragment` NOT NULL`}${COLUMN_DEFAULTS[field.column] ?? sql.fragment``}`;
}

/**
 * The model's table, its columns in the model's order (system columns first), under row-level
 * security (ENABLEd and FORCEd, so even the owner's sessions see only the tenant they name), with
 * the index of the default order and the grants of the application role: no DELETE, records are
 * soft-deleted. UNIQUE (tenant_id, id) is both the `(tenant_id, id)` index and the target of the
 * tenant-including foreign keys (addForeignKey), which are added once every table of the run exists.
 */
export async function createModelTable(tx: DatabaseTransactionConnection, model: DataModel): Promise<void> {
  const table = tableOf(model);
  const definitions = [...model.fields.map(columnDefinition), sql.fragment`PRIMARY KEY (id)`, sql.fragment`UNIQUE (tenant_id, id)`];
  await tx.query(sql.unsafe`CREATE TABLE ${table} (${sql.join(definitions, sql.fragment`, `)})`);
  await tx.query(sql.unsafe`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
  await tx.query(sql.unsafe`ALTER TABLE ${table} FORCE ROW LEVEL SECURITY`);
  await tx.query(sql.unsafe`
    CREATE POLICY tenant_isolation ON ${table}
      USING (tenant_id = public.current_tenant_id()) WITH CHECK (tenant_id = public.current_tenant_id())
  `);
  await tx.query(sql.unsafe`CREATE INDEX ON ${table} (tenant_id, created_at, id)`);
  await tx.query(sql.unsafe`GRANT SELECT, INSERT, UPDATE ON ${table} TO platform_app`);
}

/** A field added to an existing model. */
export async function addColumn(tx: DatabaseTransactionConnection, model: DataModel, field: DataField): Promise<void> {
  await tx.query(sql.unsafe`ALTER TABLE ${tableOf(model)} ADD COLUMN ${columnDefinition(field)}`);
}

/** A required field the manifest now declares nullable (the other direction is refused: existing rows may hold null). */
export async function dropNotNull(tx: DatabaseTransactionConnection, model: DataModel, field: DataField): Promise<void> {
  await tx.query(sql.unsafe`ALTER TABLE ${tableOf(model)} ALTER COLUMN ${sql.identifier([field.column])} DROP NOT NULL`);
}

/**
 * `(tenant_id, field) → target (tenant_id, id)`: a record can only ever reference a record of its own
 * tenant, whatever row-level security would allow (a foreign key check ignores policies). Indexed
 * for the joins of `select=` and for the check itself.
 */
export async function addForeignKey(tx: DatabaseTransactionConnection, model: DataModel, field: DataField, target: string): Promise<void> {
  const column = sql.identifier([field.column]);
  await tx.query(sql.unsafe`
    ALTER TABLE ${tableOf(model)} ADD FOREIGN KEY (tenant_id, ${column})
      REFERENCES ${tableOf({ schema: model.schema, table: target })} (tenant_id, id)
  `);
  await tx.query(sql.unsafe`CREATE INDEX ON ${tableOf(model)} (tenant_id, ${column})`);
}
