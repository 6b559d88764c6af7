import { problems } from '../../common/problems';
import type { DatabaseTransactionConnection } from '../../db/pool';
import type { DataModel } from '../../db/queries/data/model';
import type { DataRecord } from '../../db/queries/data/read.queries';
import {
  claimReferencedFiles, deleteFileReference, upsertFileReference, type FileReference,
} from '../../db/queries/files/references.queries';

/**
 * The references a record's `file` fields hold (migration 0030), kept in the write's own
 * transaction, so the orphan sweep (services/files/orphans.ts) never sees a record whose file it
 * does not know about. Each field of each record is one referrer, `data:<module>.<model>.<field>`.
 * A model without `file` fields costs nothing here. docs/decisions/files.md, Orphans.
 */

export interface RecordFiles {
  model: DataModel;
  tenantId: string;
  recordId: string;
  /** The record before the write; null on create. */
  before: DataRecord | null;
  /** The record after it as stored (its hooks applied); null when it is deleted. */
  after: DataRecord | null;
}

const fileOf = (record: DataRecord | null, field: string): string | null => (record?.[field] as string | null | undefined) ?? null;

/**
 * Moves the references of the fields whose file changed. A file given must be one the tenant can
 * reference (pending_scan or available): an unknown id, another tenant's file and a rejected,
 * deleted or purged one are 400 validation-error `FILE_NOT_FOUND` naming the field, the same answer
 * for each, so another tenant's file ids are not told apart from unknown ones. Thrown inside the
 * transaction, so the record's write rolls back with it.
 */
export async function recordFileReferences(tx: DatabaseTransactionConnection, { model, tenantId, recordId, before, after }: RecordFiles): Promise<void> {
  const changed = model.fields
    .filter((field) => field.type === 'file' && fileOf(before, field.name) !== fileOf(after, field.name))
    .map((field) => ({ field: field.name, fileId: fileOf(after, field.name) }));
  if (changed.length === 0) return;
  const given = changed.flatMap(({ fileId }) => (fileId === null ? [] : [fileId]));
  const referenceable = given.length > 0 ? await claimReferencedFiles(tx, tenantId, given) : new Set<string>();
  const refused = changed.filter(({ fileId }) => fileId !== null && !referenceable.has(fileId));
  if (refused.length > 0) {
    throw problems.validation(refused.map(({ field }) => ({
      field, code: 'FILE_NOT_FOUND', message: `${field} names no file of this tenant that can be referenced (pending_scan or available)`,
    })), `The ${model.name} record references a file that does not exist`);
  }
  for (const { field, fileId } of changed) {
    const reference: FileReference = { tenantId, referrer: `data:${model.module}.${model.name}.${field}`, referrerId: recordId };
    if (fileId === null) await deleteFileReference(tx, reference);
    else await upsertFileReference(tx, reference, fileId);
  }
}
