import { ForeignKeyIntegrityConstraintViolationError, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { sql } from '../../pool';
import type { DataField, DataModel } from './model';

/**
 * The writes of the data layer's records (issue 16): insert, partial update, soft delete. Every
 * statement runs in withTenant and names the tenant as well (tenant scoping twice); names come from
 * the model (sql.identifier), values are bind parameters, so nothing of a request reaches the SQL
 * text. Reads, with the query language, are read.queries.ts.
 */

const columnRow = z.object({ column: z.string() });

/** A field of the model with the value its column takes (services/data/record-validation.ts converted it). */
export interface ColumnAssignment {
  field: DataField;
  /** jsonb values are any JSON; the others are strings (numeric, bigint, uuid, dates), numbers or booleans. */
  value: unknown;
}

type Table = Pick<DataModel, 'schema' | 'table'>;

const tableOf = (model: Table) => sql.identifier([model.schema, model.table]);
const idRow = z.object({ id: z.string() });

/** jsonb is bound as JSON text; the other types as their text form, cast by the column. */
function valueOf({ field, value }: ColumnAssignment) {
  if (value === null) return null;
  return field.type === 'jsonb' ? sql.jsonb(value as Parameters<typeof sql.jsonb>[0]) : value as string | number | boolean;
}

/** The new record; `id` is the service's UUID v7, `tenantId` the caller's. */
export async function insertRecord(
  tx: CommonQueryMethods, model: Table, tenantId: string, id: string, values: readonly ColumnAssignment[],
): Promise<void> {
  const columns = [sql.identifier(['id']), sql.identifier(['tenant_id']), ...values.map(({ field }) => sql.identifier([field.column]))];
  await tx.query(sql.unsafe`
    INSERT INTO ${tableOf(model)} (${sql.join(columns, sql.fragment`, `)})
    VALUES (${sql.join([id, tenantId, ...values.map(valueOf)], sql.fragment`, `)})
  `);
}

/**
 * Changes only the given fields of a live record of the tenant (and its updated_at); false when the
 * record is unknown, another tenant's or soft-deleted.
 */
export async function updateRecord(
  tx: CommonQueryMethods, model: Table, tenantId: string, id: string, values: readonly ColumnAssignment[],
): Promise<boolean> {
  const assignments = [
    ...values.map((assignment) => sql.fragment`${sql.identifier([assignment.field.column])} = ${valueOf(assignment)}`),
    sql.fragment`updated_at = now()`,
  ];
  const row = await tx.maybeOne(sql.type(idRow)`
    UPDATE ${tableOf(model)} SET ${sql.join(assignments, sql.fragment`, `)}
    WHERE tenant_id = ${tenantId} AND id = ${id} AND deleted_at IS NULL
    RETURNING id
  `);
  return row !== null;
}

/**
 * Locks a live record of the tenant until the transaction ends, for an update or delete that reads
 * it first (its before snapshot and hooks then see what the write changes, not a concurrent write's
 * earlier state); false when it is unknown, another tenant's or soft-deleted.
 */
export async function lockLiveRecord(tx: CommonQueryMethods, model: Table, tenantId: string, id: string): Promise<boolean> {
  const row = await tx.maybeOne(sql.type(idRow)`
    SELECT id FROM ${tableOf(model)}
    WHERE tenant_id = ${tenantId} AND id = ${id} AND deleted_at IS NULL
    FOR UPDATE
  `);
  return row !== null;
}

/** Soft delete (docs/reference/data.md#rule-8: deleted_at set, the row kept); false when there is no live record to delete. */
export async function softDeleteRecord(tx: CommonQueryMethods, model: Table, tenantId: string, id: string): Promise<boolean> {
  const row = await tx.maybeOne(sql.type(idRow)`
    UPDATE ${tableOf(model)} SET deleted_at = now(), updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${id} AND deleted_at IS NULL
    RETURNING id
  `);
  return row !== null;
}

/**
 * The foreign key a write broke (SQLSTATE 23503), or null for any other error. The keys are
 * `(tenant_id, <field>) → target (tenant_id, id)` (provision.queries.ts addForeignKey), so the
 * referenced record is missing in the caller's tenant.
 */
export function brokenForeignKeyOf(error: unknown): string | null {
  return error instanceof ForeignKeyIntegrityConstraintViolationError ? error.constraint : null;
}

/**
 * The field column of one of the model's foreign keys (the one that is not tenant_id), from the
 * catalog: PostgreSQL leaves the key out of the violation's detail for a role under row-level
 * security, and the constraint names are PostgreSQL's own (truncated to 63 bytes), not a pattern.
 * It reads the schema, not a tenant's rows, so it names no tenant.
 */
export function selectForeignKeyColumn(db: CommonQueryMethods, model: Table, constraint: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(columnRow)`
    SELECT a.attname AS column
    FROM pg_constraint c
    JOIN pg_class r ON r.oid = c.conrelid
    JOIN pg_namespace n ON n.oid = r.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
    WHERE n.nspname = ${model.schema} AND r.relname = ${model.table} AND c.conname = ${constraint}
      AND c.contype = 'f' AND a.attname <> 'tenant_id'
  `);
}
