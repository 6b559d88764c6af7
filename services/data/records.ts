import type { AuthState } from '../../common/context';
import { newId } from '../../common/ids';
import { problems } from '../../common/problems';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import type { DataModel } from '../../db/queries/data/model';
import type { ReadPlan } from '../../db/queries/data/read-plan';
import { selectRecord, type DataRecord } from '../../db/queries/data/read.queries';
import {
  brokenForeignKeyOf, insertRecord, selectForeignKeyColumn, softDeleteRecord, updateRecord as updateRow,
} from '../../db/queries/data/records.queries';
import { withTenant } from '../../db/tenant';
import type { PermissionCheck } from '../access/permissions';
import type { DataCatalogue } from './catalogue';
import type { RawQuery } from './query/parse';
import { embeddedModels, planList, planOne } from './query/plan';
import { selectRecords } from './query/select';
import { checkRecordSize, validateRecord, type RecordLimits } from './record-validation';

/**
 * The record endpoints of the data layer (document 2, Data layer; issue 16): create, read one, list,
 * partial update and soft delete of a module model's records, in the caller's tenant only. The route
 * has already answered 404 module-not-found for a module the tenant has not installed.
 */
export interface DataDeps {
  db: DatabasePool;
  catalogue: DataCatalogue;
  /** The gateway's permission resolver: the caller's roles now, not the token's. */
  permissions: PermissionCheck;
  limits: RecordLimits;
}

/** Which record of which model a request names. */
export interface RecordTarget {
  module: string;
  model: string;
}

/** Document 2, Limits / Data layer: a response body is at most 1 MB. */
const RESPONSE_MAX_BYTES = 1_048_576;

export type ListAnswer =
  | { data: DataRecord[]; next_page_token?: string }
  | { data: DataRecord[]; meta: { cursor: string | null; hasMore: boolean } };

type Action = 'read' | 'create' | 'update' | 'delete';

/**
 * `{module}.{model}.{action}`, or `.write` for create and update (DECISIONS.md: a role holding write
 * holds create and update); `{module}.*` and `*` are the resolver's own matching (permits). The
 * model is looked up first: an unknown model is 404 not-found whatever the caller holds.
 */
async function modelFor(deps: DataDeps, auth: AuthState, target: RecordTarget, action: Action): Promise<DataModel> {
  const model = deps.catalogue.model(target.module, target.model);
  if (!model) throw problems.notFound(`model ${target.module}.${target.model}`);
  const key = `${model.module}.${model.name}`;
  const allowed = await deps.permissions.allows(auth, `${key}.${action}`)
    || ((action === 'create' || action === 'update') && await deps.permissions.allows(auth, `${key}.write`));
  if (!allowed) throw problems.forbidden(`${key}.${action} is required`);
  return model;
}

/**
 * An embed reads another model's records, so it needs that model's read permission too: a caller
 * who may read contacts but not companies cannot see companies through `select=companies(…)`.
 */
async function assertEmbedsReadable(deps: DataDeps, auth: AuthState, model: DataModel, plan: Pick<ReadPlan, 'embeds'>): Promise<void> {
  for (const name of embeddedModels(plan)) {
    const key = `${model.module}.${name}.read`;
    if (!await deps.permissions.allows(auth, key)) throw problems.forbidden(`${key} is required to embed ${name}`);
  }
}

/**
 * Serialized and measured before anything is sent (document 2: a response over 1 MB is 413
 * payload-too-large), so a client never receives half a body under a 200 status. Koa serializes the
 * body again: one more JSON.stringify of at most 1 MB, against a response schema the guard can check.
 */
function measured<T>(value: T): T {
  const size = Buffer.byteLength(JSON.stringify(value));
  if (size > RESPONSE_MAX_BYTES) throw problems.responseTooLarge(RESPONSE_MAX_BYTES);
  return value;
}

/** The model's own fields of a record, as its size is measured (record-validation.ts checkRecordSize). */
function modelFieldsOf(model: DataModel, record: DataRecord): Record<string, unknown> {
  return Object.fromEntries(model.fields.filter((field) => !field.system).map((field) => [field.name, record[field.name]]));
}

/**
 * A reference to a record the tenant does not have (foreign key `(tenant_id, field)`): 400 naming
 * the field, the same answer for an unknown id and another tenant's, so neither is told apart.
 */
async function writing<T>(deps: DataDeps, model: DataModel, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const constraint = brokenForeignKeyOf(error);
    // The write's transaction has rolled back: the catalog is read on the pool.
    const column = constraint === null ? null : await selectForeignKeyColumn(deps.db, model, constraint);
    const field = model.fields.find((candidate) => candidate.column === column);
    if (!field) throw error;
    throw problems.validation([{
      field: field.name, code: 'INVALID_VALUE', message: `${field.name} names no ${field.references ?? 'record'} record of this tenant`,
    }], `The ${model.name} record references a record that does not exist`);
  }
}

/** The record as GET answers it (its default select), read in the write's own transaction. */
async function readBack(deps: DataDeps, model: DataModel, tx: DatabaseTransactionConnection, tenantId: string, id: string): Promise<DataRecord> {
  const record = await selectRecord(tx, planOne(model, deps.catalogue, {}, tenantId), id);
  if (!record) throw problems.notFound(`${model.name} record`);
  return record;
}

/** POST /data/{module}/{model}: 201 with the record; id (UUID v7) and tenantId are the platform's. */
export async function createRecord(deps: DataDeps, auth: AuthState, target: RecordTarget, body: Record<string, unknown>): Promise<DataRecord> {
  const model = await modelFor(deps, auth, target, 'create');
  const values = validateRecord(model, body, 'create', deps.limits);
  const id = newId();
  const record = await writing(deps, model, () => withTenant(deps.db, auth.tenantId, async (tx) => {
    await insertRecord(tx, model, auth.tenantId, id, values.fields);
    return readBack(deps, model, tx, auth.tenantId, id);
  }));
  return measured(record);
}

/**
 * GET /data/{module}/{model}/:id with `select=` (embeds). A soft-deleted record is 404 here, as it
 * is for PATCH and DELETE: by id, a deleted record is gone; a list with `deleted_at=is.notnull`
 * still finds it.
 */
export async function readRecord(deps: DataDeps, auth: AuthState, target: RecordTarget, id: string, query: RawQuery): Promise<DataRecord> {
  const model = await modelFor(deps, auth, target, 'read');
  const plan = planOne(model, deps.catalogue, query, auth.tenantId);
  await assertEmbedsReadable(deps, auth, model, plan);
  const record = await withTenant(deps.db, auth.tenantId, (tx) => selectRecord(tx, plan, id));
  if (!record) throw problems.notFound(`${model.name} record`);
  return measured(record);
}

/**
 * GET /data/{module}/{model}: filters, order, select and a keyset page. `page_size`/`page_token`
 * answer {data, next_page_token}; `limit`/`cursor` answer {data, meta {cursor, hasMore}}, the
 * envelopes of the platform's other lists (money history, audit).
 */
export async function listRecords(deps: DataDeps, auth: AuthState, target: RecordTarget, query: RawQuery): Promise<ListAnswer> {
  const model = await modelFor(deps, auth, target, 'read');
  const plan = planList(model, deps.catalogue, query, auth.tenantId);
  await assertEmbedsReadable(deps, auth, model, plan);
  const page = await withTenant(deps.db, auth.tenantId, (tx) => selectRecords(tx, plan));
  if (query.limit !== undefined || query.cursor !== undefined) {
    const cursor = page.nextPageToken ?? null;
    return measured({ data: page.rows, meta: { cursor, hasMore: cursor !== null } });
  }
  return measured(page.nextPageToken ? { data: page.rows, next_page_token: page.nextPageToken } : { data: page.rows });
}

/** PATCH /data/{module}/{model}/:id: only the fields given change; 200 with the record. */
export async function updateRecord(
  deps: DataDeps, auth: AuthState, target: RecordTarget, id: string, body: Record<string, unknown>,
): Promise<DataRecord> {
  const model = await modelFor(deps, auth, target, 'update');
  const values = validateRecord(model, body, 'update', deps.limits);
  const record = await writing(deps, model, () => withTenant(deps.db, auth.tenantId, async (tx) => {
    if (!await updateRow(tx, model, auth.tenantId, id, values.fields)) throw problems.notFound(`${model.name} record`);
    const updated = await readBack(deps, model, tx, auth.tenantId, id);
    // Thrown inside the transaction: a change that grows the record past the limit is rolled back.
    checkRecordSize(modelFieldsOf(model, updated), deps.limits.maxRecordSizeBytes);
    return updated;
  }));
  return measured(record);
}

/** DELETE /data/{module}/{model}/:id: soft delete (deleted_at set, the row kept); 204. */
export async function deleteRecord(deps: DataDeps, auth: AuthState, target: RecordTarget, id: string): Promise<void> {
  const model = await modelFor(deps, auth, target, 'delete');
  const deleted = await withTenant(deps.db, auth.tenantId, (tx) => softDeleteRecord(tx, model, auth.tenantId, id));
  if (!deleted) throw problems.notFound(`${model.name} record`);
}
