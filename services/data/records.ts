import type { AuthState } from '../../common/context';
import { newId } from '../../common/ids';
import { problems } from '../../common/problems';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import type { DataModel } from '../../db/queries/data/model';
import type { ReadPlan } from '../../db/queries/data/read-plan';
import { selectRecord, type DataRecord } from '../../db/queries/data/read.queries';
import {
  brokenForeignKeyOf, insertRecord, lockLiveRecord, selectForeignKeyColumn, softDeleteRecord, updateRecord as updateRow,
} from '../../db/queries/data/records.queries';
import { adjustUsage } from '../../db/queries/billing/usage.queries';
import { withTenant } from '../../db/tenant';
import { rowsIn, type TenantReader } from '../../db/tenant-reads';
import type { PermissionCheck } from '../access/permissions';
import type { Actor } from '../../common/context';
import { countCreationIn } from '../billing/limits';
import type { DataCatalogue } from './catalogue';
import type { BeforeEvent, DataHooks } from './hooks';
import type { RawQuery } from './query/parse';
import {
  addressedAt, createNestedRecords, fieldAt, nestedModels, recordCountOf, splitCreateBody, validateCreate, type RecordToCreate,
} from './nested-writes';
import { embeddedModels, planList, planOne } from './query/plan';
import { readsWithinBudget, selectRecords } from './query/select';
import { recordFileReferences } from './file-references';
import { recordChange, type RecordActor } from './record-changes';
import { checkRecordSize, validateRecord, type RecordLimits, type RecordValues } from './record-validation';

/**
 * The record endpoints of the data layer (docs/reference/data.md, Resources; issue 16): create, read one, list,
 * partial update and soft delete of a module model's records, in the caller's tenant only. The route
 * has already answered 404 module-not-found for a module the tenant has not installed.
 */
export interface DataDeps {
  db: DatabasePool;
  /** The same database for reads in one round trip (db/tenant-reads.ts). */
  reads: TenantReader;
  catalogue: DataCatalogue;
  /** The gateway's permission resolver: the caller's roles now, not the token's. */
  permissions: PermissionCheck;
  limits: RecordLimits;
  /** The modules' before hooks, loaded at start-up (hooks.ts loadDataHooks). */
  hooks: DataHooks;
  /** Billing is deployed (BILLING_ENABLED): the plan's `records` limit is enforced; the count is kept either way. */
  enforcePlanLimits: boolean;
  /** The statement_timeout of a read (readsWithinBudget): DATA_STATEMENT_TIMEOUT_MS, within the gateway's deadline. */
  readTimeoutMs: number;
}

/** Which record of which model a request names. */
export interface RecordTarget {
  module: string;
  model: string;
}

/** A response body is at most 1 MB (docs/reference/data.md#rule-20). */
const RESPONSE_MAX_BYTES = 1_048_576;

/** `count`: every record the filters match, only when asked for (Prefer: count=exact). */
export type ListAnswer =
  | { data: DataRecord[]; next_page_token?: string; count?: number }
  | { data: DataRecord[]; meta: { cursor: string | null; hasMore: boolean }; count?: number };

type Action = 'read' | 'create' | 'update' | 'delete';

/**
 * `{module}.{model}.{action}`, or `.write` for create and update (docs/reference/data.md#rule-2;
 * docs/decisions/data.md, Records: a role holding write holds create and update); `{module}.*`
 * and `*` are the resolver's own matching (permits). The model is looked up first: an unknown model
 * is 404 not-found whatever the caller holds.
 */
async function modelFor(deps: DataDeps, auth: AuthState, target: RecordTarget, action: Action): Promise<DataModel> {
  const model = deps.catalogue.model(target.module, target.model);
  if (!model) throw problems.notFound(`model ${target.module}.${target.model}`);
  await assertAllowed(deps, auth, model, action);
  return model;
}

async function assertAllowed(deps: DataDeps, auth: AuthState, model: DataModel, action: Action): Promise<void> {
  const key = `${model.module}.${model.name}`;
  const allowed = await deps.permissions.allows(auth, `${key}.${action}`)
    || ((action === 'create' || action === 'update') && await deps.permissions.allows(auth, `${key}.write`));
  if (!allowed) throw problems.forbidden(`${key}.${action} is required`);
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
 * Serialized and measured before anything is sent (docs/reference/data.md#rule-20: a response over
 * 1 MB is 413 payload-too-large), so a client never receives half a body under a 200 status. Koa
 * serializes the body again: one more JSON.stringify of at most 1 MB, against a response schema the
 * guard can check.
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

/** A record's write broke a foreign key (SQLSTATE 23503): which record, for `writing` to name the field. */
class BrokenReference extends Error {
  constructor(readonly model: DataModel, readonly path: string | undefined, readonly constraint: string, cause: unknown) {
    super(`${model.module}.${model.name}: foreign key ${constraint} broken`, { cause });
  }
}

/**
 * One record's steps with their failures told by record: a validation-error of a nested record (its
 * hooks' refusal) names its fields by path (`contacts[1].age`); a broken foreign key becomes a
 * BrokenReference, whose field `writing` reads once the transaction has rolled back.
 */
async function attributed<T>(model: DataModel, path: string | undefined, steps: () => Promise<T>): Promise<T> {
  try {
    return await steps();
  } catch (error) {
    const constraint = brokenForeignKeyOf(error);
    if (constraint !== null) throw new BrokenReference(model, path, constraint, error);
    throw path === undefined ? error : addressedAt(path, error);
  }
}

/**
 * A reference to a record the tenant does not have (foreign key `(tenant_id, field)`): 400 naming
 * the field, the same answer for an unknown id and another tenant's, so neither is told apart.
 */
async function writing<T>(deps: Pick<DataDeps, 'db'>, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!(error instanceof BrokenReference)) throw error;
    const { model, path, constraint } = error;
    // The write's transaction has rolled back: the catalog is read on the pool.
    const column = await selectForeignKeyColumn(deps.db, model, constraint);
    const field = model.fields.find((candidate) => candidate.column === column);
    if (!field) throw error.cause;
    throw problems.validation([{
      field: fieldAt(path, field.name), code: 'INVALID_VALUE', message: `${field.name} names no ${field.references ?? 'record'} record of this tenant`,
    }], `The ${model.name} record references a record that does not exist`);
  }
}

/**
 * The record as GET answers it (its default select), read in the write's own transaction; `deleted`
 * reads the record a delete has just soft-deleted (GET's plan keeps live records only).
 */
async function readBack(
  deps: Pick<DataDeps, 'catalogue'>, model: DataModel, tx: DatabaseTransactionConnection, tenantId: string, id: string, deleted = false,
): Promise<DataRecord> {
  const plan = planOne(model, deps.catalogue, {}, tenantId);
  const record = await selectRecord(rowsIn(tx), deleted ? { ...plan, conditions: [] } : plan, id);
  if (!record) throw problems.notFound(`${model.name} record`);
  return record;
}

/**
 * A live record of the tenant, locked until the write's transaction ends, so the hooks and the
 * before snapshot of the change see the record the write changes.
 */
async function lockedRecord(deps: DataDeps, model: DataModel, tx: DatabaseTransactionConnection, tenantId: string, id: string): Promise<DataRecord> {
  if (!await lockLiveRecord(tx, model, tenantId, id)) throw problems.notFound(`${model.name} record`);
  return readBack(deps, model, tx, tenantId, id);
}

/**
 * Who writes: the tenant, and the user the hooks see (null when the platform writes on its own
 * account, an event subscriber's record). A request's AuthState is one.
 */
type RecordWriter = Pick<AuthState, 'tenantId'> & { userId: string | null };

/**
 * The values to write once the model's before hooks have run (docs/reference/data.md#rule-23: they may change the data),
 * checked against the model again when a hook changed anything: a hook cannot write what a client
 * could not. A hook that refuses throws its problem, and the transaction writes nothing.
 */
async function hooked(
  deps: Pick<DataDeps, 'hooks' | 'limits'>, model: DataModel, auth: RecordWriter, event: Exclude<BeforeEvent, 'beforeDelete'>,
  values: RecordValues, record: DataRecord | null,
): Promise<RecordValues> {
  const data = Object.fromEntries(values.fields.map(({ field, value }) => [field.name, value]));
  const result = await deps.hooks.runBefore(event, { tenantId: auth.tenantId, userId: auth.userId, module: model.module, model: model.name, data, record });
  return result === data ? values : validateRecord(model, { ...result }, event === 'beforeCreate' ? 'create' : 'update', deps.limits);
}

/**
 * The steps of every created record, alone or nested: its before hooks, the insert, the record read
 * back as GET answers it, and its event and audit record (record-changes.ts).
 */
async function createOne(
  deps: RecordWriteDeps, tx: DatabaseTransactionConnection, auth: RecordWriter, actor: RecordActor, model: DataModel, id: string, record: RecordToCreate,
): Promise<DataRecord> {
  return attributed(model, record.path, async () => {
    const values = await hooked(deps, model, auth, 'beforeCreate', record.values, null);
    await insertRecord(tx, model, auth.tenantId, id, values.fields);
    const after = await readBack(deps, model, tx, auth.tenantId, id);
    await recordFileReferences(tx, { model, tenantId: auth.tenantId, recordId: id, before: null, after });
    await recordChange(tx, { model, tenantId: auth.tenantId, actor, kind: 'created', before: null, after });
    return after;
  });
}

/**
 * POST /data/{module}/{model}: 201 with the record; id (UUID v7) and tenantId are the platform's. A
 * key naming a one-to-many relation (`contacts: [...]`) nests records created with it, answered
 * embedded under that name (nested-writes.ts); each model written needs its create permission. In
 * one transaction: every record counted against the plan's `records` (402 plan-limit-exceeded past
 * the ceiling), then per record its hooks, insert, event and audit record; anything refused rolls
 * back all of it. The answer is measured inside it, so a 413 writes nothing either.
 */
export async function createRecord(
  deps: DataDeps, auth: AuthState, actor: Actor, target: RecordTarget, body: Record<string, unknown>,
): Promise<DataRecord> {
  const model = await modelFor(deps, auth, target, 'create');
  const split = splitCreateBody(model, deps.catalogue, body);
  for (const nested of nestedModels(split)) await assertAllowed(deps, auth, nested, 'create');
  const id = newId();
  const checked = validateCreate(model, split, id, deps.limits);
  return writing(deps, () => withTenant(deps.db, auth.tenantId, async (tx) => {
    await countCreationIn(tx, 'records', deps.enforcePlanLimits, recordCountOf(checked));
    const record = await createOne(deps, tx, auth, actor, model, id, { values: checked.values });
    const nested = await createNestedRecords(checked, (nestedModel, row) => createOne(deps, tx, auth, actor, nestedModel, newId(), row));
    return measured({ ...record, ...nested });
  }));
}

/** What a write needs of the data layer when no caller's permissions are checked. */
export type RecordWriteDeps = Pick<DataDeps, 'db' | 'catalogue' | 'limits' | 'hooks' | 'enforcePlanLimits'>;

/**
 * A record created by the platform itself in the caller's tenant transaction (an event subscriber's,
 * services/data/module-subscribers.ts), so the record commits with whatever else the
 * caller writes there (the subscriber's receipt) or not at all. The same steps as createRecord — the
 * model's checks, the before hooks (their `userId` null), the plan's `records` limit, the change event
 * and the audit record (actor null) — without a caller's permission check or nested records; the
 * answer is not measured (nothing is sent). `tx` must be a withTenant transaction of `tenantId`.
 */
export async function createRecordIn(
  deps: RecordWriteDeps, tx: DatabaseTransactionConnection, tenantId: string, target: RecordTarget, body: Record<string, unknown>,
): Promise<DataRecord> {
  const model = deps.catalogue.model(target.module, target.model);
  if (!model) throw problems.notFound(`model ${target.module}.${target.model}`);
  const id = newId();
  const checked = validateRecord(model, body, 'create', deps.limits);
  return writing(deps, async () => {
    await countCreationIn(tx, 'records', deps.enforcePlanLimits, 1);
    return createOne(deps, tx, { tenantId, userId: null }, PLATFORM_ACTOR, model, id, { values: checked });
  });
}

const PLATFORM_ACTOR: RecordActor = { userId: null, ip: null, userAgent: null };

/**
 * GET /data/{module}/{model}/:id with `select=` (embeds). A soft-deleted record is 404 here, as it
 * is for PATCH and DELETE: by id, a deleted record is gone; a list with `deleted_at=is.notnull`
 * still finds it.
 */
export async function readRecord(deps: DataDeps, auth: AuthState, target: RecordTarget, id: string, query: RawQuery): Promise<DataRecord> {
  const model = await modelFor(deps, auth, target, 'read');
  const plan = planOne(model, deps.catalogue, query, auth.tenantId);
  await assertEmbedsReadable(deps, auth, model, plan);
  const record = await selectRecord(readsWithinBudget(deps.reads, auth.tenantId, deps.readTimeoutMs), plan, id);
  if (!record) throw problems.notFound(`${model.name} record`);
  return measured(record);
}

/** A list's answer, and the row offset of its first record in the whole list (for the route's Content-Range). */
export interface ListedPage {
  body: ListAnswer;
  pageStart: number;
}

/**
 * GET /data/{module}/{model}: filters, order, select and a keyset page. `page_size`/`page_token`
 * answer {data, next_page_token}; `limit`/`cursor` answer {data, meta {cursor, hasMore}}, the
 * envelopes of the platform's other lists (money history, audit). With `count` (the route's
 * `Prefer: count=exact`) either also has `count`, counted in the page's own statement.
 */
export async function listRecords(
  deps: DataDeps, auth: AuthState, target: RecordTarget, query: RawQuery, options: { count?: boolean } = {},
): Promise<ListedPage> {
  const model = await modelFor(deps, auth, target, 'read');
  const plan = planList(model, deps.catalogue, query, auth.tenantId);
  await assertEmbedsReadable(deps, auth, model, plan);
  const read = readsWithinBudget(deps.reads, auth.tenantId, deps.readTimeoutMs, { discourageSorts: plan.readsOrderIndex });
  const page = await selectRecords(read, plan, options);
  const count = page.total === undefined ? {} : { count: page.total };
  const pageStart = plan.pageStart ?? 0;
  if (query.limit !== undefined || query.cursor !== undefined) {
    const cursor = page.nextPageToken ?? null;
    return { body: measured({ data: page.rows, meta: { cursor, hasMore: cursor !== null }, ...count }), pageStart };
  }
  return { body: measured({ data: page.rows, ...(page.nextPageToken ? { next_page_token: page.nextPageToken } : {}), ...count }), pageStart };
}

/**
 * PATCH /data/{module}/{model}/:id: only the fields given change; 200 with the record. The record is
 * locked first, then the before hooks run, then the update, its event and audit record.
 */
export async function updateRecord(
  deps: DataDeps, auth: AuthState, actor: Actor, target: RecordTarget, id: string, body: Record<string, unknown>,
): Promise<DataRecord> {
  const model = await modelFor(deps, auth, target, 'update');
  const checked = validateRecord(model, body, 'update', deps.limits);
  const record = await writing(deps, () => withTenant(deps.db, auth.tenantId, async (tx) => {
    const before = await lockedRecord(deps, model, tx, auth.tenantId, id);
    const values = await hooked(deps, model, auth, 'beforeUpdate', checked, before);
    await attributed(model, undefined, () => updateRow(tx, model, auth.tenantId, id, values.fields));
    const after = await readBack(deps, model, tx, auth.tenantId, id);
    // Thrown inside the transaction: a change that grows the record past the limit is rolled back.
    checkRecordSize(modelFieldsOf(model, after), deps.limits.maxRecordSizeBytes);
    await recordFileReferences(tx, { model, tenantId: auth.tenantId, recordId: id, before, after });
    await recordChange(tx, { model, tenantId: auth.tenantId, actor, kind: 'updated', before, after });
    return after;
  }));
  return measured(record);
}

/**
 * DELETE /data/{module}/{model}/:id: soft delete (deleted_at set, the row kept); 204. The before
 * hooks may refuse it; the record stops counting against the plan's `records` (docs/decisions/data.md).
 */
export async function deleteRecord(deps: DataDeps, auth: AuthState, actor: Actor, target: RecordTarget, id: string): Promise<void> {
  const model = await modelFor(deps, auth, target, 'delete');
  await withTenant(deps.db, auth.tenantId, async (tx) => {
    const before = await lockedRecord(deps, model, tx, auth.tenantId, id);
    await deps.hooks.runBefore('beforeDelete', {
      tenantId: auth.tenantId, userId: auth.userId, module: model.module, model: model.name, data: {}, record: before,
    });
    await softDeleteRecord(tx, model, auth.tenantId, id);
    await adjustUsage(tx, 'records', -1);
    const after = await readBack(deps, model, tx, auth.tenantId, id, true);
    // A deleted record lets go of its files (there is no undelete): unreferenced, they become orphans.
    await recordFileReferences(tx, { model, tenantId: auth.tenantId, recordId: id, before, after: null });
    await recordChange(tx, { model, tenantId: auth.tenantId, actor, kind: 'deleted', before, after });
  });
}
