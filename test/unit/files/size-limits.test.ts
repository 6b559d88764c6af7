import { fileKindOf, largestFileBytes, sizeLimitOf } from '../../../services/files/size-limits';

/** docs/reference/files.md#rule-4: images (image/*) 10 MB, every other file 50 MB. */
const settings = { maxImageSizeBytes: 10 * 1024 * 1024, maxDocumentSizeBytes: 50 * 1024 * 1024 };

describe('the size limit of an upload by its media type', () => {
  it.each(['image/png', 'image/jpeg', 'image/svg+xml', 'IMAGE/WEBP', 'image/heic'])('%s is an image: 10 MB', (type) => {
    expect(fileKindOf(type)).toBe('image');
    expect(sizeLimitOf(type, settings)).toBe(settings.maxImageSizeBytes);
  });

  it.each(['application/pdf', 'application/octet-stream', 'text/plain', 'video/mp4', 'application/image'])('%s is a document: 50 MB', (type) => {
    expect(fileKindOf(type)).toBe('document');
    expect(sizeLimitOf(type, settings)).toBe(settings.maxDocumentSizeBytes);
  });

  it('refuses by declared length only beyond the largest limit of any type', () => {
    expect(largestFileBytes(settings)).toBe(settings.maxDocumentSizeBytes);
    expect(largestFileBytes({ maxImageSizeBytes: 80, maxDocumentSizeBytes: 20 })).toBe(80);
  });
});
