import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import sharp, { type ResizeOptions } from 'sharp';
import type { ObjectStore } from '../../common/object-store';
import type { FileRow } from '../../db/queries/files/files.queries';
import { mergeFileThumbnails } from '../../db/queries/files/thumbnails.queries';
import type { DatabasePool } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { thumbnailKeyOf } from './object-keys';
import { loadFile, type FileRef, type FileScanDeps } from './scan';

/**
 * The thumbnail presets (docs/reference/files.md#rule-15), the one table of them (the upload's and GET /files/:id/thumbnail/:preset's).
 * A preset with a height is cut to exactly that box (cover, centred); full_1200 keeps the aspect
 * ratio ("height automatic") and is never enlarged. Every thumbnail is WebP.
 */
export const THUMBNAIL_PRESETS = {
  icon_32: { width: 32, height: 32 },
  avatar_64: { width: 64, height: 64 },
  card_300: { width: 300, height: 200 },
  preview_600: { width: 600, height: 400 },
  full_1200: { width: 1200 },
} as const satisfies Record<string, { width: number; height?: number }>;

export type ThumbnailPreset = keyof typeof THUMBNAIL_PRESETS;

export const THUMBNAIL_PRESET_NAMES = Object.keys(THUMBNAIL_PRESETS) as ThumbnailPreset[];

export function isThumbnailPreset(value: string): value is ThumbnailPreset {
  return Object.hasOwn(THUMBNAIL_PRESETS, value);
}

/** Generated for every image once it is available (docs/reference/files.md#rule-15). */
export const UPLOAD_THUMBNAILS: readonly ThumbnailPreset[] = ['icon_32', 'card_300'];

/** The `mimeType`s that get thumbnails. */
export function isImage(mimeType: string): boolean {
  return mimeType.startsWith('image/');
}

/**
 * How sharp sizes a preset. fastShrinkOnLoad lets libjpeg and libwebp decode at 1/2, 1/4 or 1/8 of the
 * size when the target is that much smaller, which is most of a thumbnail's cost for a large photo.
 */
export function thumbnailResizeOf(preset: ThumbnailPreset): ResizeOptions {
  const box: { width: number; height?: number } = THUMBNAIL_PRESETS[preset];
  return box.height === undefined
    ? { width: box.width, withoutEnlargement: true, fastShrinkOnLoad: true }
    : { width: box.width, height: box.height, fit: 'cover', position: 'centre', fastShrinkOnLoad: true };
}

/**
 * libwebp's effort 0-6 (default 4): 0 encodes a full_1200 a third faster than 2 for at most 7 % more
 * bytes, and that encode is most of an on-demand render's time (docs/decisions/files.md, Thumbnails).
 */
const WEBP_EFFORT = 0;

/**
 * A preset of an image, as WebP. A stream is piped into sharp as it arrives; an error of the stream
 * itself (the object store's) is rethrown as is, any other is sharp's: the image cannot be read
 * (the caller tells the two apart with `UnreadableImage`).
 */
export async function renderThumbnail(original: Buffer | Readable, preset: ThumbnailPreset): Promise<Buffer> {
  // rotate() applies the EXIF orientation first, so a portrait photo's thumbnail stands upright.
  const transform = (image: sharp.Sharp) => image.rotate().resize(thumbnailResizeOf(preset)).webp({ effort: WEBP_EFFORT });
  if (Buffer.isBuffer(original)) {
    try {
      return await transform(sharp(original)).toBuffer();
    } catch (err) {
      throw new UnreadableImage(err);
    }
  }
  let sourceError: Error | undefined;
  original.once('error', (err: Error) => { sourceError = err; });
  const chunks: Buffer[] = [];
  try {
    await pipeline(original, transform(sharp()), async (rendered: AsyncIterable<Buffer>) => {
      for await (const chunk of rendered) chunks.push(chunk);
    });
  } catch (err) {
    throw sourceError ?? new UnreadableImage(err);
  }
  return Buffer.concat(chunks);
}

/** sharp could not decode the original (not an image, truncated, an unsupported format). */
export class UnreadableImage extends Error {
  constructor(cause: unknown) {
    super('the image cannot be read', { cause });
    this.name = 'UnreadableImage';
  }
}

/**
 * Renders `presets` of an available image from its stored original, stores each at its thumbnail key
 * and records them on the file ({preset: key}, merged into what it has). Rendering again writes the
 * same objects, so a retry is harmless. An image sharp cannot read is no failure: the file stays
 * available without thumbnails, and the reason is logged. Answers the file's thumbnails.
 */
export async function generateThumbnails(
  deps: Pick<FileScanDeps, 'appPool' | 'objectStore' | 'logger'>, ref: FileRef, presets: readonly ThumbnailPreset[] = UPLOAD_THUMBNAILS,
): Promise<Record<string, string>> {
  return generateThumbnailsOf(deps, await loadFile(deps, ref), presets);
}

/** generateThumbnails for a caller that has just read the file's row (and perhaps the original's bytes). */
export async function generateThumbnailsOf(
  deps: Pick<FileScanDeps, 'appPool' | 'objectStore' | 'logger'>, file: FileRow, presets: readonly ThumbnailPreset[] = UPLOAD_THUMBNAILS,
  bytes?: Buffer,
): Promise<Record<string, string>> {
  if (file.status !== 'available' || !file.objectKey) return file.thumbnails;
  const { s3, bucket } = deps.objectStore;
  // Images are at most FILES_MAX_IMAGE_SIZE_MB (10 MB): read once (unless the caller has the
  // object's bytes already), rendered once per preset.
  const original = bytes ?? await buffer(await s3.getObject(bucket, file.objectKey));
  let rendered: Array<[ThumbnailPreset, Buffer]>;
  try {
    rendered = await Promise.all(presets.map(async (preset) => [preset, await renderThumbnail(original, preset)] as [ThumbnailPreset, Buffer]));
  } catch (err) {
    deps.logger.warn({ err, fileId: file.id, mimeType: file.mimeType }, 'the image cannot be read; the file stays available without thumbnails');
    return file.thumbnails;
  }
  return storeThumbnails(deps.appPool, deps.objectStore, file, rendered);
}

/**
 * Stores rendered presets at their thumbnail keys and records them on the file (merged into what it
 * has). Answers the file's thumbnails, {preset: objectKey}, afterwards.
 */
export async function storeThumbnails(
  pool: DatabasePool, store: ObjectStore, file: Pick<FileRow, 'tenantId' | 'bucket' | 'id'>,
  rendered: ReadonlyArray<readonly [ThumbnailPreset, Buffer]>,
): Promise<Record<string, string>> {
  const thumbnails: Record<string, string> = {};
  for (const [preset, image] of rendered) {
    const key = thumbnailKeyOf(file.tenantId, file.bucket, file.id, preset);
    await store.s3.putObject(store.bucket, key, image, image.length, { 'Content-Type': 'image/webp' });
    thumbnails[preset] = key;
  }
  const updated = await withTenant(pool, file.tenantId, (tx) => mergeFileThumbnails(tx, file.tenantId, file.id, thumbnails));
  return updated?.thumbnails ?? thumbnails;
}
