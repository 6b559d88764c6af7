import type { AuthState } from '../../common/context';
import { newId } from '../../common/ids';
import { presignBoundPut } from '../../common/object-store';
import { problems } from '../../common/problems';
import type { FilesDeps } from './deps';
import { presignedStagingKeyOf, type FileBucket } from './object-keys';
import { fileKindOf, sizeLimitOf } from './size-limits';
import { connectedScans, recordStagedFile, startScan } from './staging';

/** The body of POST /files/presign (api/routes/files/presign.schemas.ts). */
export interface PresignRequest {
  bucket: FileBucket;
  originalName: string;
  mimeType: string;
  sizeBytes: number;
}

export interface PresignedUpload {
  /** A PUT of the object store valid FILES_PRESIGN_TTL_MIN, bound to `fields` Content-Type and the declared size. */
  uploadUrl: string;
  fileId: string;
  expiresAt: string;
  /** What the PUT must carry: the Content-Type header (signed), and the object's key in the store. */
  fields: { 'Content-Type': string; key: string };
}

/**
 * How long past the URL's expiry the scan workflow still waits for the PUT's notification: the store
 * checks the signature's expiry when a request starts, so a large PUT begun in the URL's last second
 * completes later, and the notification travels through Kafka and the consumer after that.
 */
const UPLOAD_GRACE_MS = 5 * 60_000;

/**
 * POST /files/presign (docs/reference/files.md#rule-8; issue 17): a URL the client PUTs the file to, straight into
 * the tenant's staging area, signed so that the store takes exactly the declared Content-Type and
 * Content-Length. The file is recorded pending_scan with its declared size counted into the plan's
 * storage_bytes now (the quota reservation: 402 over the limit, 503 at the staging cap), exactly as an
 * upload is, and its scan workflow starts waiting for the PUT (noticed through the store's event
 * notifications, services/files/staged-objects.ts). No PUT by the URL's expiry (and a grace): the
 * workflow rejects the file as upload-expired, which releases both reservations.
 */
export async function presignUpload(deps: FilesDeps, auth: AuthState, request: PresignRequest): Promise<PresignedUpload> {
  const scans = connectedScans(deps);
  const limit = sizeLimitOf(request.mimeType, deps.settings);
  if (request.sizeBytes > limit) throw problems.fileTooLarge(limit, fileKindOf(request.mimeType));

  const fileId = newId();
  const key = presignedStagingKeyOf(auth.tenantId, fileId);
  const ttlSeconds = deps.settings.presignTtlMin * 60;
  // Taken before signing, so expiresAt is never later than the signature's own expiry.
  const signedAt = new Date();
  const uploadUrl = await presignBoundPut(
    deps.objectStore, key, { contentType: request.mimeType, contentLength: request.sizeBytes }, ttlSeconds, signedAt,
  );
  const row = await recordStagedFile(deps, auth, {
    id: fileId, bucket: request.bucket, originalName: request.originalName, mimeType: request.mimeType,
    sizeBytes: request.sizeBytes, sha256: null, meta: null, stagingKey: key,
  });
  await startScan(deps, scans, row, { uploadTtlMs: ttlSeconds * 1000 + UPLOAD_GRACE_MS });
  return {
    uploadUrl, fileId, expiresAt: new Date(signedAt.getTime() + ttlSeconds * 1000).toISOString(),
    fields: { 'Content-Type': request.mimeType, key },
  };
}
