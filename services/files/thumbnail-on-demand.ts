import type { AuthState } from '../../common/context';
import { Problem, problems } from '../../common/problems';
import type { FileRow } from '../../db/queries/files/files.queries';
import type { FilesDeps } from './deps';
import { thumbnailKeyOf } from './object-keys';
import { availableFile } from './read';
import {
  THUMBNAIL_PRESET_NAMES, UnreadableImage, isImage, isThumbnailPreset, renderThumbnail, storeThumbnails, type ThumbnailPreset,
} from './thumbnails';
import { FILE_URL_TTL_SECONDS, presignedUrlOf } from './views';

/**
 * GET /files/:id/thumbnail/:preset (docs/reference/files.md#rule-15; issue 17). A preset the file has is signed at
 * once; one it has not (the upload renders icon_32 and card_300 only) is rendered from the original,
 * stored and recorded once, then kept like the others. The file is read as GET /files/:id reads it
 * (read.ts availableFile): not available, unknown or another tenant's is 404 file-not-found,
 * rejected is 422 file-rejected.
 */

/**
 * The renderings running in this process, by thumbnail key: concurrent requests for one file and
 * preset share one. Across processes two may render the same preset; both write the same key and
 * the jsonb merge records it either way, so the second costs time and nothing else.
 */
const inFlight = new Map<string, Promise<string>>();

/** Where to redirect: a presigned URL of the preset's thumbnail, valid FILE_URL_TTL_SECONDS. */
export async function thumbnailRedirect(deps: FilesDeps, auth: AuthState, id: string, preset: string): Promise<string> {
  if (!isThumbnailPreset(preset)) throw problems.presetNotFound(preset, THUMBNAIL_PRESET_NAMES);
  return thumbnailUrlOfFile(deps, await availableFile(deps, auth, id), preset);
}

/** The same for an available file already read (a user's avatar, services/files/avatars.ts). */
export async function thumbnailUrlOfFile(deps: FilesDeps, file: FileRow & { objectKey: string }, preset: ThumbnailPreset): Promise<string> {
  // A document has no preset at all: the thumbnail it asks for does not exist (404), as an unknown
  // preset does; 422 processing-failed is kept for an image that cannot be decoded.
  if (!isImage(file.mimeType)) {
    throw new Problem('preset-not-found', `File ${file.id} is ${file.mimeType}, not an image: it has no thumbnails`, { presets: [] });
  }
  const key = file.thumbnails[preset] ?? await renderOnce(deps, file, preset);
  return presignedUrlOf(deps.objectStore, key, FILE_URL_TTL_SECONDS, 'image/webp');
}

function renderOnce(deps: FilesDeps, file: FileRow & { objectKey: string }, preset: ThumbnailPreset): Promise<string> {
  const key = thumbnailKeyOf(file.tenantId, file.bucket, file.id, preset);
  let rendering = inFlight.get(key);
  if (!rendering) {
    rendering = render(deps, file, preset).then(() => key).finally(() => inFlight.delete(key));
    inFlight.set(key, rendering);
  }
  return rendering;
}

/** Renders the preset from the original, streamed from the store, then stores and records it. */
async function render(deps: FilesDeps, file: FileRow & { objectKey: string }, preset: ThumbnailPreset): Promise<void> {
  const { s3, bucket } = deps.objectStore;
  let image: Buffer;
  try {
    image = await renderThumbnail(await s3.getObject(bucket, file.objectKey), preset);
  } catch (err) {
    if (!(err instanceof UnreadableImage)) throw err;
    deps.logger.warn({ err, fileId: file.id, mimeType: file.mimeType, preset }, 'the image cannot be read: no thumbnail');
    throw problems.processingFailed(`File ${file.id} (${file.mimeType}) cannot be read as an image; no ${preset} thumbnail can be made`);
  }
  await storeThumbnails(deps.db, deps.objectStore, file, [[preset, image]]);
}
