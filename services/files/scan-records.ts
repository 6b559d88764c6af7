import { auditEventOf } from '../audit/writer';
import type { EventInput } from '../events/publish';
import type { FileRow } from '../../db/queries/files/files.queries';
import type { FileActor } from './scan';

/**
 * What a scan's outcome writes to the outbox with the status change, in the same statement: the
 * domain event (platform.files.events, keyed by the file id: docs/reference/files.md, Events) and the audit record.
 */

const SOURCE = 'files';

/**
 * files.file.uploaded (docs/reference/files.md#rule-10): the file passed its scan and can
 * be read. Its payload (docs/reference/files.md, Events) follows the other kernel events
 * (snake_case, the entity's id and tenant first).
 */
export function fileUploadedEvent(file: FileRow, actor: FileActor): EventInput {
  return {
    tenantId: file.tenantId,
    type: 'files.file.uploaded',
    source: SOURCE,
    key: file.id,
    traceId: actor.traceId,
    data: {
      file_id: file.id,
      tenant_id: file.tenantId,
      bucket: file.bucket,
      original_name: file.originalName,
      mime_type: file.mimeType,
      size_bytes: file.sizeBytes,
      sha256: file.sha256,
      uploaded_by: file.uploadedBy,
      uploaded_at: file.createdAt,
      available_at: file.scannedAt,
    },
  };
}

/** What is audited of a file: a scan's outcome, the trash's moves (services/files/trash.ts), processing (process.ts). */
export type FileAuditAction = 'files.file.uploaded' | 'files.file.rejected' | 'files.file.deleted' | 'files.file.restored'
  | 'files.file.purged' | 'files.file.permanent_deleted'
  | 'files.file.processing_requested' | 'files.file.processed' | 'files.file.processing_failed'
  | 'files.orphan.deleted';

/**
 * The audit record of a change to a file: the file after the change. The actor is the sender of the
 * request behind the change (for a workflow's step, the request that started it), or the row's
 * uploader when there was none; none for the platform's own sweeps (`platform`).
 */
export function fileAudit(action: FileAuditAction, file: FileRow, actor: FileActor, meta?: Record<string, unknown>): EventInput {
  return auditEventOf({
    tenantId: file.tenantId,
    source: SOURCE,
    action,
    entityType: 'file',
    entityId: file.id,
    actorId: actor.platform ? null : actor.actorId ?? file.uploadedBy,
    after: { ...file },
    meta: meta ?? null,
    traceId: actor.traceId,
  });
}
