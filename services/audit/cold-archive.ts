import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { pipeline, Transform } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { ObjectStore } from '../../common/object-store';
import type { ArchivedRecord } from './cold-storage';

/** Size and SHA-256 of an archive object as read, to compare with what the catalogue recorded. */
export interface ReadDigest {
  bytes: number;
  sha256: string;
}

/**
 * The records of one cold archive object (gzip NDJSON, services/audit/cold-storage.ts), one at a time
 * in the object's (seq) order: a month of millions of records is never held whole. `onDigest`, if
 * given, receives the compressed object's size and SHA-256 once the last record was read.
 */
export async function* readArchivedRecords(
  store: ObjectStore, objectKey: string, onDigest?: (digest: ReadDigest) => void,
): AsyncGenerator<ArchivedRecord> {
  const hash = createHash('sha256');
  let bytes = 0;
  const measured = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const text = pipeline(await store.s3.getObject(store.bucket, objectKey), measured, createGunzip(), () => undefined);
  try {
    for await (const line of createInterface({ input: text, crlfDelay: Infinity })) {
      if (line !== '') yield JSON.parse(line) as ArchivedRecord;
    }
    onDigest?.({ bytes, sha256: hash.digest('hex') });
  } finally {
    // A reader that stops early (a merge that ended, a broken record found) ends the download too.
    text.destroy();
  }
}
