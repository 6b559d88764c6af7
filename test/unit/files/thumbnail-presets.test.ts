import { Readable } from 'node:stream';
import sharp from 'sharp';
import {
  THUMBNAIL_PRESET_NAMES, UnreadableImage, isThumbnailPreset, renderThumbnail, type ThumbnailPreset,
} from '../../../services/files/thumbnails';

/**
 * The thumbnail presets of docs/reference/files.md#rule-15 (issue 17): the four boxes are cut to exactly their size, full_1200
 * is 1200 wide with the height of the aspect ratio and never enlarged. Rendered by sharp in memory.
 */

function jpeg(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 10, g: 160, b: 90 } } }).jpeg().toBuffer();
}

async function sizeOf(image: Buffer): Promise<{ format?: string; width?: number; height?: number }> {
  const { format, width, height } = await sharp(image).metadata();
  return { format, width, height };
}

describe('the thumbnail presets', () => {
  it('are the five of the files reference, and nothing else is one', () => {
    expect(THUMBNAIL_PRESET_NAMES).toEqual(['icon_32', 'avatar_64', 'card_300', 'preview_600', 'full_1200']);
    for (const name of ['icon_64', 'FULL_1200', '', 'toString', '__proto__', 'constructor']) expect(isThumbnailPreset(name)).toBe(false);
  });

  it.each<[ThumbnailPreset, number, number]>([
    ['icon_32', 32, 32], ['avatar_64', 64, 64], ['card_300', 300, 200], ['preview_600', 600, 400], ['full_1200', 1200, 900],
  ])('renders %s of a 2000×1500 JPEG as a %i×%i WebP', async (preset, width, height) => {
    expect(await sizeOf(await renderThumbnail(await jpeg(2000, 1500), preset))).toEqual({ format: 'webp', width, height });
  });

  it('keeps a portrait image\'s aspect ratio in full_1200 and cuts the boxes to size', async () => {
    const portrait = await jpeg(1500, 2000);
    expect(await sizeOf(await renderThumbnail(portrait, 'full_1200'))).toEqual({ format: 'webp', width: 1200, height: 1600 });
    expect(await sizeOf(await renderThumbnail(portrait, 'preview_600'))).toEqual({ format: 'webp', width: 600, height: 400 });
  });

  it('never enlarges full_1200; the boxes are filled even from a smaller image', async () => {
    const small = await jpeg(800, 600);
    expect(await sizeOf(await renderThumbnail(small, 'full_1200'))).toEqual({ format: 'webp', width: 800, height: 600 });
    expect(await sizeOf(await renderThumbnail(await jpeg(20, 10), 'avatar_64'))).toEqual({ format: 'webp', width: 64, height: 64 });
  });

  it('renders from a stream as from a buffer', async () => {
    const original = await jpeg(2000, 1500);
    const chunks = [original.subarray(0, 1000), original.subarray(1000, 50_000), original.subarray(50_000)];
    expect(await sizeOf(await renderThumbnail(Readable.from(chunks), 'card_300'))).toEqual({ format: 'webp', width: 300, height: 200 });
  });

  it('tells an image sharp cannot read (UnreadableImage) from a failing stream (its own error)', async () => {
    await expect(renderThumbnail(Buffer.from('not an image'), 'icon_32')).rejects.toBeInstanceOf(UnreadableImage);
    await expect(renderThumbnail(Readable.from([Buffer.from('not an image')]), 'icon_32')).rejects.toBeInstanceOf(UnreadableImage);
    const truncated = (await jpeg(400, 300)).subarray(0, 200);
    await expect(renderThumbnail(Readable.from([truncated]), 'icon_32')).rejects.toBeInstanceOf(UnreadableImage);

    const lost = new Error('connection reset');
    const failing = new Readable({ read() { this.destroy(lost); } });
    await expect(renderThumbnail(failing, 'icon_32')).rejects.toBe(lost);
  });
});
