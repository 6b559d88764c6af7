import { OperationMisfit, outputFormatOf, plannedSize, orientedSizeOf } from '../../../services/files/image-operations';
import type { ImageOperation } from '../../../workflows/files/process.messages';

/**
 * What POST /files/:id/process knows before a pixel is decoded (services/files/image-operations.ts):
 * the size each operation leads to, in order, and the format the result is written in.
 */
describe('plannedSize', () => {
  const photo = { width: 640, height: 480 };

  it.each<[string, ImageOperation[], { width: number; height: number }]>([
    ['no size change for a convert', [{ convert: { format: 'webp' } }], { width: 640, height: 480 }],
    ['a crop gives its own size', [{ crop: { x: 40, y: 30, width: 600, height: 450 } }], { width: 600, height: 450 }],
    ['a crop may touch the edges', [{ crop: { x: 0, y: 0, width: 640, height: 480 } }], { width: 640, height: 480 }],
    ['a resize by width keeps the aspect ratio', [{ resize: { width: 320 } }], { width: 320, height: 240 }],
    ['a resize by height keeps the aspect ratio', [{ resize: { height: 120 } }], { width: 160, height: 120 }],
    ['a resize with both sides is that box', [{ resize: { width: 100, height: 100 } }], { width: 100, height: 100 }],
    ['a resize never reaches 0', [{ resize: { width: 1 } }], { width: 1, height: 1 }],
    ['a quarter turn swaps the sides', [{ rotate: { degrees: 90 } }], { width: 480, height: 640 }],
    ['a half turn keeps them', [{ rotate: { degrees: 180 } }], { width: 640, height: 480 }],
    ['operations apply in order', [{ rotate: { degrees: 270 } }, { crop: { x: 0, y: 0, width: 480, height: 600 } }, { resize: { width: 240 } }], { width: 240, height: 300 }],
  ])('%s', (_case, operations, expected) => {
    expect(plannedSize(photo, operations)).toEqual(expected);
  });

  it.each<[string, ImageOperation[], string]>([
    ['a crop past the right edge', [{ crop: { x: 600, y: 0, width: 41, height: 10 } }], 'operation 1'],
    ['a crop past the bottom edge', [{ crop: { x: 0, y: 470, width: 10, height: 11 } }], 'operation 1'],
    ['a crop that fitted before a quarter turn', [{ rotate: { degrees: 90 } }, { crop: { x: 0, y: 0, width: 600, height: 100 } }], 'operation 2'],
    ['a crop of a resized image', [{ resize: { width: 64 } }, { crop: { x: 0, y: 0, width: 64, height: 49 } }], 'operation 2'],
  ])('refuses %s, naming the operation', (_case, operations, named) => {
    expect(() => plannedSize(photo, operations)).toThrow(OperationMisfit);
    expect(() => plannedSize(photo, operations)).toThrow(named);
  });
});

describe('orientedSizeOf', () => {
  it('is the size as shown: sharp\'s autoOrient when the EXIF orientation turns the image', () => {
    expect(orientedSizeOf({ width: 640, height: 480, autoOrient: { width: 480, height: 640 } })).toEqual({ width: 480, height: 640 });
    expect(orientedSizeOf({ width: 640, height: 480, autoOrient: undefined as never })).toEqual({ width: 640, height: 480 });
  });
});

describe('outputFormatOf', () => {
  it.each<[string, { format: string; compression?: string }, ImageOperation[], string]>([
    ['a JPEG stays JPEG', { format: 'jpeg' }, [], 'jpeg'],
    ['a PNG stays PNG', { format: 'png' }, [{ rotate: { degrees: 90 } }], 'png'],
    ['a WebP stays WebP', { format: 'webp' }, [], 'webp'],
    ['an AVIF (HEIF with AV1) stays AVIF', { format: 'heif', compression: 'av1' }, [], 'avif'],
    ['a format the API does not write becomes PNG', { format: 'gif' }, [], 'png'],
    ['a HEIC (HEVC) becomes PNG', { format: 'heif', compression: 'hevc' }, [], 'png'],
    ['a convert decides', { format: 'png' }, [{ convert: { format: 'avif' } }], 'avif'],
    ['the last convert decides', { format: 'png' }, [{ convert: { format: 'jpeg' } }, { resize: { width: 10 } }, { convert: { format: 'webp' } }], 'webp'],
  ])('%s', (_case, metadata, operations, expected) => {
    expect(outputFormatOf(metadata as never, operations)).toBe(expected);
  });
});
