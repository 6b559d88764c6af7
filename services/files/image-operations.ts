import sharp, { type Metadata } from 'sharp';
import { OUTPUT_FORMATS, type ImageOperation, type OutputFormat } from '../../workflows/files/process.messages';

/**
 * POST /files/:id/process's operations (docs/reference/files.md#rule-16) with sharp. sharp orders the
 * steps of one pipeline itself (rotate, then extract, then resize), whatever order they were called
 * in, so each operation is its own pass over raw pixels: the operations apply in the order given, and
 * no pass re-encodes (no quality is lost before the last step).
 */

/** Width and height as the user sees the image: after its EXIF orientation. */
export interface ImageSize {
  width: number;
  height: number;
}

/** An operation that does not fit the image it reaches (a crop outside it), with the reason. */
export class OperationMisfit extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OperationMisfit';
  }
}

/** sharp could not decode the image or apply an operation to it. */
export class UnprocessableImage extends Error {
  constructor(cause: unknown) {
    super(`the image cannot be processed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'UnprocessableImage';
  }
}

/** The size an image shows at (sharp's autoOrient: EXIF orientations 5 to 8 turn it a quarter). */
export function orientedSizeOf(metadata: Pick<Metadata, 'width' | 'height' | 'autoOrient'>): ImageSize {
  return { width: metadata.autoOrient?.width ?? metadata.width, height: metadata.autoOrient?.height ?? metadata.height };
}

/** A resize with one side keeps the aspect ratio; with both it is cut to that box (cover, centred). */
function resizedSize(size: ImageSize, resize: { width?: number; height?: number }): ImageSize {
  const width = resize.width ?? Math.max(1, Math.round((size.width * resize.height!) / size.height));
  const height = resize.height ?? Math.max(1, Math.round((size.height * resize.width!) / size.width));
  return { width, height };
}

/**
 * The size after each operation, from the image's size: what can be known before a pixel is
 * decoded. A crop that does not lie inside the image it reaches is an OperationMisfit, named by its
 * position (1-based). Answers the final size.
 */
export function plannedSize(size: ImageSize, operations: readonly ImageOperation[]): ImageSize {
  return operations.reduce<ImageSize>((current, operation, index) => {
    if ('crop' in operation) {
      const { x, y, width, height } = operation.crop;
      if (x + width > current.width || y + height > current.height) {
        throw new OperationMisfit(`operation ${index + 1} (crop ${width}×${height} at ${x},${y}) does not lie inside `
          + `the ${current.width}×${current.height} image it is applied to`);
      }
      return { width, height };
    }
    if ('resize' in operation) return resizedSize(current, operation.resize);
    if ('rotate' in operation) return operation.rotate.degrees === 180 ? current : { width: current.height, height: current.width };
    return current;
  }, size);
}

/** What a source is written back as without a convert: its own format when the API writes it, otherwise PNG (lossless). */
export function outputFormatOf(metadata: Pick<Metadata, 'format' | 'compression'>, operations: readonly ImageOperation[]): OutputFormat {
  const converted = operations.reduce<OutputFormat | undefined>((format, operation) => ('convert' in operation ? operation.convert.format : format), undefined);
  if (converted) return converted;
  if (metadata.format === 'heif' && metadata.compression === 'av1') return 'avif';
  return (OUTPUT_FORMATS as readonly string[]).includes(metadata.format) ? metadata.format as OutputFormat : 'png';
}

export const MIME_TYPE_OF: Readonly<Record<OutputFormat, string>> = {
  webp: 'image/webp', png: 'image/png', jpeg: 'image/jpeg', avif: 'image/avif',
};

interface RawImage {
  data: Buffer;
  info: { width: number; height: number; channels: 1 | 2 | 3 | 4 };
}

async function rawOf(image: sharp.Sharp): Promise<RawImage> {
  const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
  return { data, info: { width: info.width, height: info.height, channels: info.channels } };
}

function passOf(image: sharp.Sharp, operation: ImageOperation): sharp.Sharp {
  if ('crop' in operation) {
    const { x, y, width, height } = operation.crop;
    return image.extract({ left: x, top: y, width, height });
  }
  if ('resize' in operation) {
    const { width, height } = operation.resize;
    return width !== undefined && height !== undefined
      ? image.resize({ width, height, fit: 'cover', position: 'centre' })
      : image.resize({ width, height });
  }
  if ('rotate' in operation) return image.rotate(operation.rotate.degrees);
  return image;
}

function encoded(image: sharp.Sharp, format: OutputFormat, quality: number): sharp.Sharp {
  switch (format) {
    // JPEG has no alpha: transparent pixels become white, not libvips' default black.
    case 'jpeg': return image.flatten({ background: '#ffffff' }).jpeg({ quality });
    case 'webp': return image.webp({ quality });
    case 'avif': return image.avif({ quality });
    // Lossless: sharp's PNG `quality` would switch to a palette, which no one asked for.
    case 'png': return image.png();
  }
}

export interface ProcessedImage {
  data: Buffer;
  format: OutputFormat;
  mimeType: string;
  width: number;
  height: number;
}

/**
 * Applies `operations` in order to an image and encodes the result (the convert's format, or the
 * source's: outputFormatOf) at `quality`. The EXIF orientation is applied first, so coordinates are
 * those of the image as it is shown. `checkpoint` runs between passes (the activity's cancellation:
 * an attempt that timed out stops at the next pass). Any failure of sharp is an UnprocessableImage,
 * a crop outside the image an OperationMisfit.
 */
export async function applyOperations(
  source: Buffer, operations: readonly ImageOperation[], quality: number, checkpoint: () => void = () => undefined,
): Promise<ProcessedImage> {
  const metadata = await bySharp(() => sharp(source).metadata());
  plannedSize(orientedSizeOf(metadata), operations);
  const format = outputFormatOf(metadata, operations);
  let image = await bySharp(() => rawOf(sharp(source).rotate()));
  for (const operation of operations) {
    if ('convert' in operation) continue;
    checkpoint();
    const current = image;
    image = await bySharp(() => rawOf(passOf(sharp(current.data, { raw: current.info }), operation)));
  }
  checkpoint();
  const last = image;
  const { data, info } = await bySharp(() => encoded(sharp(last.data, { raw: last.info }), format, quality).toBuffer({ resolveWithObject: true }));
  return { data, format, mimeType: MIME_TYPE_OF[format], width: info.width, height: info.height };
}

/** A step of sharp's: whatever it throws is the image's fault, not the caller's. */
async function bySharp<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw new UnprocessableImage(err);
  }
}
