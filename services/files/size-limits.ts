import type { Config } from '../../common/config';

type SizeSettings = Pick<Config['files'], 'maxImageSizeBytes' | 'maxDocumentSizeBytes'>;

/** docs/reference/files.md#rule-4: an image (image/*) may be 10 MB, any other file 50 MB. */
export function fileKindOf(mimeType: string): 'image' | 'document' {
  return mimeType.toLowerCase().startsWith('image/') ? 'image' : 'document';
}

export function sizeLimitOf(mimeType: string, settings: SizeSettings): number {
  return fileKindOf(mimeType) === 'image' ? settings.maxImageSizeBytes : settings.maxDocumentSizeBytes;
}

/** The largest file of any type: what can be refused from a declared Content-Length before reading. */
export function largestFileBytes(settings: SizeSettings): number {
  return Math.max(settings.maxImageSizeBytes, settings.maxDocumentSizeBytes);
}
