import { Readable, Transform } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { fileTypeStream } from 'file-type';
import type { AuthState } from '../../common/context';
import { newId } from '../../common/ids';
import { putStream, type StoredObject } from '../../common/object-store';
import { problems } from '../../common/problems';
import type { FileRow } from '../../db/queries/files/files.queries';
import type { FilesDeps } from './deps';
import { readMultipartForm, type StreamedRequest } from './multipart-form';
import { receivedStagingKeyOf, type FileBucket } from './object-keys';
import { fileKindOf, largestFileBytes, sizeLimitOf } from './size-limits';
import { checkStagingRoomOf, connectedScans, discardStaged, recordStagedFile, startScan } from './staging';
import { fileView, type FileView } from './views';

/** The text fields of an upload, checked (the route's schema: api/routes/files/files.schemas.ts). */
export interface UploadFields {
  bucket: FileBucket;
  originalName: string;
  /** As the client declares it; otherwise detected from the file's first bytes. */
  mimeType?: string;
  meta?: Record<string, unknown>;
}

/** How the route checks the text fields (400 validation-error or bucket-invalid when they break its schema). */
export interface UploadFieldChecks {
  /** The fields sent before the file, as far as they go: a field still missing may come after the file. */
  sent(fields: Readonly<Record<string, string>>): Partial<UploadFields>;
  /** Every field, once the form has been read. */
  complete(fields: Readonly<Record<string, string>>): UploadFields;
}

/** The form's name for the file part (docs/reference/files.md, Resources: `file`). */
export const FILE_PART = 'file';

/** bucket, originalName, mimeType, meta. */
const MAX_FIELDS = 4;
/** The longest field is meta (docs/reference/files.md#rule-4: 4 KB); a longer one is refused as it arrives. */
const MAX_FIELD_BYTES = 4096;
/**
 * What a form may carry beyond its file (fields, part headers, boundaries): a declared
 * Content-Length above the largest file plus this is refused before a byte is read.
 */
const FORM_ALLOWANCE_BYTES = 64 * 1024;
/** The type of a file whose first bytes match no known signature (and whose client named none). */
export const UNKNOWN_TYPE = 'application/octet-stream';

/**
 * POST /files/upload (docs/reference/files.md#rule-2): streams the form's file to the tenant's staging key,
 * records it pending_scan and starts its malware scan; nothing of it can be fetched until the scan
 * has passed. Refused before the body is read: no workflow service (503), a full staging area
 * (503 staging-limit-exceeded), a declared length no file may have (413); the plan's storage already
 * used up is refused by the route's billing step (402). When the file starts: the fields sent before
 * it. While it streams: the size limit of its type as known then (413 as soon as it is crossed).
 * Once the form is read: every field, and the size limit of the final type (a mimeType sent after
 * the file). Once it is stored: its bytes counted against the plan's storage_bytes (402 above it)
 * and the staging cap checked again, race-free. Whatever is refused after the first byte was
 * written leaves nothing in staging.
 */
export async function uploadFile(deps: FilesDeps, auth: AuthState, request: StreamedRequest, checks: UploadFieldChecks): Promise<FileView> {
  const { settings } = deps;
  const largest = largestFileBytes(settings);
  const declared = Number(request.headers['content-length']);
  if (declared > largest + FORM_ALLOWANCE_BYTES) throw problems.fileTooLarge(largest);
  const scans = connectedScans(deps);
  const { tenantId } = auth;
  await checkStagingRoomOf(deps, tenantId);

  const fileId = newId();
  const stagingKey = receivedStagingKeyOf(tenantId, fileId);
  let row: FileRow;
  try {
    const form = await readMultipartForm(request, {
      fileField: FILE_PART, maxFields: MAX_FIELDS, maxFieldBytes: MAX_FIELD_BYTES, maxFileBytes: largest,
      tooLarge: () => problems.fileTooLarge(largest),
    }, (sent, file) => stage(deps, stagingKey, checks.sent(sent).mimeType, file));
    const fields = checks.complete(form.fields);
    const mimeType = fields.mimeType ?? form.file.mimeType;
    const stored = form.file.stored;
    const limit = sizeLimitOf(mimeType, settings);
    if (stored.bytes > limit) throw problems.fileTooLarge(limit, fileKindOf(mimeType));
    row = await recordStagedFile(deps, auth, {
      id: fileId, bucket: fields.bucket, originalName: fields.originalName, mimeType,
      sizeBytes: stored.bytes, sha256: stored.sha256, meta: fields.meta ?? null, stagingKey,
    });
  } catch (error) {
    await discardStaged(deps, stagingKey);
    throw error;
  }

  await startScan(deps, scans, row);
  return fileView(deps.objectStore, row);
}

interface StagedFile {
  /** The type the file was streamed as: declared before it, or detected. */
  mimeType: string;
  stored: StoredObject;
}

/**
 * Streams the file to its staging key through the size limit of its type as known when it starts:
 * the mimeType sent before it, otherwise the type its first bytes show.
 */
async function stage(deps: FilesDeps, stagingKey: string, declared: string | undefined, file: Readable): Promise<StagedFile> {
  const typed = declared !== undefined ? { stream: file, mimeType: declared } : await detectType(file);
  const limit = sizeLimitOf(typed.mimeType, deps.settings);
  const bounds = sizeBounds(limit, () => problems.fileTooLarge(limit, fileKindOf(typed.mimeType)));
  const stored = await putStream(deps.objectStore, stagingKey, typed.stream, typed.mimeType, [bounds]);
  return { mimeType: typed.mimeType, stored };
}

/**
 * The type of a file whose client named none: file-type's stream detection reads the first bytes
 * (its sample) for a known signature and hands the stream on unchanged. Never from the file's name.
 */
export async function detectType(file: Readable): Promise<{ stream: Readable; mimeType: string }> {
  const detecting = await fileTypeStream(Readable.toWeb(file) as ReadableStream<Uint8Array>);
  return {
    stream: Readable.fromWeb(detecting as WebReadableStream<Uint8Array>),
    mimeType: detecting.fileType?.mime ?? UNKNOWN_TYPE,
  };
}

/**
 * Passes bytes on until more than `limitBytes` have come, then fails (the upload stops at once). An
 * empty file fails at its end, before the store completes an object of it: no scan can pass an empty
 * file (clamd gives no verdict on it), so none is kept waiting for one.
 */
function sizeBounds(limitBytes: number, tooLarge: () => Error): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > limitBytes) done(tooLarge());
      else done(null, chunk);
    },
    flush(done) {
      done(seen === 0 ? problems.validation([{ field: FILE_PART, code: 'TOO_SHORT', message: 'is empty' }]) : null);
    },
  });
}
