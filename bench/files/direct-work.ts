import { copyObject, removeObjects, type ObjectStore } from '../../common/object-store';
import { scanStagedObject, type VirusScanner } from '../../services/files/scanner';
import { renderThumbnail, UPLOAD_THUMBNAILS } from '../../services/files/thumbnails';

/**
 * What issue 17 counts as an upload's work once the image is staged, with nothing around it: clamd
 * INSTREAM, the copy to its final key under `prefix`, staging removed, the two upload thumbnails
 * rendered and stored. As the platform's scan does, the bytes scanned are kept for the thumbnails
 * (one read of the object). Answers the keys it stored.
 */
export async function promoteDirectly(
  deps: { store: ObjectStore; scanner: VirusScanner }, stagingKey: string, prefix: string, sizeBytes: number,
): Promise<string[]> {
  const { store, scanner } = deps;
  const verdict = await scanStagedObject({ objectStore: store, scanner }, stagingKey, () => undefined, sizeBytes, { keepBytes: true });
  if (verdict.infected || !verdict.bytes) throw new Error('a bench image was found infected, or not read whole');
  const original = verdict.bytes;
  const stored = `${prefix}/original`;
  await copyObject(store, stagingKey, stored);
  await removeObjects(store, [stagingKey]);
  const thumbnails = await Promise.all(UPLOAD_THUMBNAILS.map(async (preset) => {
    const key = `${prefix}/${preset}.webp`;
    const thumbnail = await renderThumbnail(original, preset);
    await store.s3.putObject(store.bucket, key, thumbnail, thumbnail.length, { 'Content-Type': 'image/webp' });
    return key;
  }));
  return [stored, ...thumbnails];
}
