import { pipeline, Transform, type Readable } from 'node:stream';
import NodeClam from 'clamscan';
import type { Config } from '../../common/config';
import type { ObjectStore } from '../../common/object-store';
import type { Progress } from '../../common/progress';

/** What ClamAV said of a file: clean, or infected with the signatures it found. */
export type ScanVerdict = { infected: false } | { infected: true; signatures: string[] };

/** A virus scanner over a byte stream. */
export interface VirusScanner {
  scan(stream: Readable): Promise<ScanVerdict>;
  /**
   * The scanner's answer to VERSION, as it gives it: clamd's `ClamAV <engine>/<database>/<date>`, or
   * `ClamAV <engine>` alone when it has loaded no official signature database.
   */
  version(): Promise<string>;
}

/**
 * A staged object's verdict, with the ETag of the bytes scanned when the store gave one, and the
 * bytes themselves when the caller asked to keep them and the scan read the whole object.
 */
export type StagedObjectVerdict = ScanVerdict & { etag?: string; bytes?: Buffer };

/** The staged object is not there: no retry will find it (the file is rejected, see workflows/files). */
export class StagedObjectMissing extends Error {
  override name = 'StagedObjectMissing';
}

/**
 * The staged object has no bytes. clamd answers an empty INSTREAM with no verdict (clamscan's
 * isInfected null), and a verdict is never made up, so the file cannot pass (docs/decisions/files.md, The scan pipeline).
 */
export class StagedObjectEmpty extends Error {
  override name = 'StagedObjectEmpty';
}

/**
 * The staged object's size is not the size recorded for the file: a presigned upload's PUT is
 * bound to the declared length by its signature, so this is a store that did not enforce it. The
 * recorded size is what the plan's storage counts, so such a file is never scanned into use.
 */
export class StagedObjectSizeMismatch extends Error {
  override name = 'StagedObjectSizeMismatch';
}

/** The socket idle timeout: clamd reads an INSTREAM as it arrives, so silence this long is a fault. */
const CLAMD_IDLE_TIMEOUT_MS = 60_000;
/** How often a long scan reports the bytes it has sent (the activity heartbeats each report). */
const PROGRESS_EVERY_BYTES = 1024 * 1024;

/**
 * clamd over TCP (CLAMAV_HOST, CLAMAV_PORT), each scan one INSTREAM. The client is set up once, on
 * the first scan; it does not ping clamd at set-up, so an unreachable clamd fails the scan itself,
 * which its caller retries. Only a reply of OK or FOUND is a verdict: anything else (no reply, a read
 * timeout, a size limit) is an error, never clean.
 */
export function createClamdScanner(cfg: Config['clamav']): VirusScanner {
  let client: Promise<NodeClam> | undefined;
  const connected = () => {
    client ??= new NodeClam().init({
      removeInfected: false, scanLog: null, debugMode: false, preference: 'clamdscan',
      // No local binary: a scan that clamd cannot do fails rather than fall back to something else.
      clamscan: { active: false },
      clamdscan: { host: cfg.host, port: cfg.port, timeout: CLAMD_IDLE_TIMEOUT_MS, localFallback: false, active: true, bypassTest: true },
    }).catch((error: unknown) => {
      client = undefined;
      throw error;
    });
    return client;
  };
  return {
    async scan(stream) {
      const result = await (await connected()).scanStream(stream);
      if (result.isInfected === true) return { infected: true, signatures: result.viruses };
      if (result.isInfected === false) return { infected: false };
      throw new Error(`clamd gave no verdict: ${JSON.stringify(result.resultString)}`);
    },
    async version() {
      return (await connected()).getVersion();
    },
  };
}

/** Passes the bytes on, reporting progress; keeps them in `kept` when given. */
function reportingProgress(progress: Progress, kept?: Buffer[]): Transform {
  let bytes = 0;
  let reported = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      kept?.push(chunk);
      if (bytes - reported >= PROGRESS_EVERY_BYTES) {
        reported = bytes;
        progress({ bytesScanned: bytes });
      }
      done(null, chunk);
    },
  });
}

const isNoSuchKey = (error: unknown): boolean => (error as { code?: string } | null)?.code === 'NoSuchKey';

/** The staged object's size, or null when there is none; the store unreachable is thrown. */
export async function statStagedObject({ s3, bucket }: ObjectStore, stagingKey: string): Promise<{ size: number } | null> {
  try {
    return await s3.statObject(bucket, stagingKey);
  } catch (error) {
    if (isNoSuchKey(error) || (error as { code?: string }).code === 'NotFound') return null;
    throw error;
  }
}

/**
 * Streams a staged object from the object store to the scanner, never holding it whole unless asked
 * to (`keepBytes`: an image, at most FILES_MAX_IMAGE_SIZE_MB, whose thumbnails come next, so the
 * object is not read from the store a second time). A missing or empty object is its own error
 * (StagedObjectMissing, StagedObjectEmpty), and so is one whose size is not `expectedBytes` when
 * given (StagedObjectSizeMismatch): retrying cannot change them. Every other failure (the store or
 * clamd unreachable, a broken stream) is thrown as it is. The verdict carries the ETag of the bytes
 * scanned, so the object can be copied on only if it is still them, and the bytes when kept.
 */
export async function scanStagedObject(
  deps: { objectStore: ObjectStore; scanner: VirusScanner }, stagingKey: string, progress: Progress,
  expectedBytes?: number, options: { keepBytes?: boolean } = {},
): Promise<StagedObjectVerdict> {
  const { s3, bucket } = deps.objectStore;
  const stat = await statStagedObject(deps.objectStore, stagingKey);
  if (!stat) throw new StagedObjectMissing(`staged object ${stagingKey} does not exist`);
  if (stat.size === 0) throw new StagedObjectEmpty(`staged object ${stagingKey} is empty`);
  if (expectedBytes !== undefined && stat.size !== expectedBytes) {
    throw new StagedObjectSizeMismatch(`staged object ${stagingKey} has ${stat.size} bytes, ${expectedBytes} were recorded`);
  }
  const source = await s3.getObject(bucket, stagingKey).catch((error: unknown) => {
    throw isNoSuchKey(error) ? new StagedObjectMissing(`staged object ${stagingKey} does not exist`) : error;
  });
  const kept = options.keepBytes ? [] as Buffer[] : undefined;
  // pipeline passes a failure of the download on to the scanned stream, which fails the scan.
  const scanned = pipeline(source, reportingProgress(progress, kept), () => undefined);
  // The download's own ETag: the bytes read, even if a PUT replaces the object meanwhile.
  const etag = (source as Readable & { headers?: Record<string, string | undefined> }).headers?.etag;
  try {
    const verdict = { ...await deps.scanner.scan(scanned), ...(etag && { etag }) };
    // Only the whole object is worth keeping (a scanner may answer before it has read every byte).
    const bytes = kept && Buffer.concat(kept);
    return bytes?.length === stat.size ? { ...verdict, bytes } : verdict;
  } finally {
    // A scan that failed early (clamd refused the connection) leaves the download open otherwise.
    source.destroy();
  }
}
