import { currentRequestContext } from '../../common/context';
import type { DatabaseTransactionConnection } from '../../db/pool';
import type { DataModel } from '../../db/queries/data/model';
import type { DataRecord } from '../../db/queries/data/read.queries';
import type { Actor } from '../../common/context';
import { auditEventOf } from '../audit/writer';
import { MAX_EVENT_DATA_BYTES } from '../events/event-rules';
import { enqueueEvents } from '../events/publish';
import { topics } from '../events/topics';

/**
 * What every write of a record leaves behind, in the write's own transaction (so both exist if and
 * only if the write commits): the change-capture event `{module}.{model}.created|updated|deleted` on
 * platform.data.events, keyed by record id (docs/reference/events.md#rule-2), which is the module's
 * after hook (docs/reference/data.md#rule-25: after hooks go through the event bus); and the audit record
 * `data.{module}.{model}.{kind}` with the record before and after.
 */

export type RecordChangeKind = 'created' | 'updated' | 'deleted';

/** Who made a change: a request's actor, or the platform on its own account (userId null, an event subscriber). */
export type RecordActor = Omit<Actor, 'userId'> & { userId: string | null };

export interface RecordChange {
  model: DataModel;
  tenantId: string;
  actor: RecordActor;
  kind: RecordChangeKind;
  /** The record before the write; null on create. */
  before: DataRecord | null;
  /** The record after it; a deleted record with its deletedAt. */
  after: DataRecord;
}

/** Room left in an event for everything but the two snapshots (the audit record's action, actor, ids). */
const SNAPSHOTS_MAX_BYTES = MAX_EVENT_DATA_BYTES - 16 * 1024;

interface Snapshots {
  before: DataRecord | null;
  after: DataRecord | null;
  /** Set when a snapshot was left out to keep the event within the 1 MB of docs/reference/events.md#rule-9; the record itself is whole. */
  truncated?: true;
}

/**
 * Both snapshots when they fit in one event; a record may itself be up to 1 MB, so an update of a
 * large one leaves `before` out, then `after` too, rather than fail a write the client may make.
 */
function snapshotsOf(before: DataRecord | null, after: DataRecord): Snapshots {
  const fits = (value: unknown) => Buffer.byteLength(JSON.stringify(value)) <= SNAPSHOTS_MAX_BYTES;
  if (fits({ before, after })) return { before, after };
  if (fits(after)) return { before: null, after, truncated: true };
  return { before: null, after: null, truncated: true };
}

export async function recordChange(tx: DatabaseTransactionConnection, change: RecordChange): Promise<void> {
  const { model, tenantId, actor, kind } = change;
  const id = String(change.after.id);
  const type = `${model.module}.${model.name}.${kind}`;
  const snapshots = snapshotsOf(change.before, change.after);
  const traceId = currentRequestContext()?.traceId;
  await enqueueEvents(tx, [
    {
      tenantId,
      type,
      source: 'data',
      // Named, not derived from the type: a module may be called files or notify, whose prefixes have topics of their own.
      topic: topics.data.name,
      key: id,
      data: { id, module: model.module, model: model.name, ...snapshots },
      traceId,
    },
    auditEventOf({
      tenantId,
      source: 'data',
      action: `data.${type}`,
      // The model alone: a module slug and a model name together could pass the record's 100 characters.
      entityType: model.name,
      entityId: id,
      actorId: actor.userId,
      actorIp: actor.ip,
      actorUserAgent: actor.userAgent,
      before: snapshots.before,
      after: snapshots.after,
      meta: { module: model.module, ...(snapshots.truncated && { truncated: true }) },
      traceId,
    }),
  ]);
}
