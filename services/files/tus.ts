import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { WorkflowNotFoundError } from '@temporalio/client';
import { S3Store, type MetadataValue, type Options as S3StoreOptions } from '@tus/s3-store';
import { EXPOSED_HEADERS, Metadata, Server, type KvStore, type Upload } from '@tus/server';
import { LRUCache } from 'lru-cache';
import { fileTypeFromBuffer } from 'file-type';
import type { Config } from '../../common/config';
import { currentRequestContext, type AuthState } from '../../common/context';
import { newId } from '../../common/ids';
import { s3HttpsAgent } from '../../common/object-store';
import { problems, type Problem } from '../../common/problems';
import type { TemporalHandle } from '../../common/temporal/client';
import { selectFile, type FileRow } from '../../db/queries/files/files.queries';
import { setPendingFileType } from '../../db/queries/files/tus.queries';
import { withTenant } from '../../db/tenant';
import { fileScanWorkflowId, fileStagedSignal } from '../../workflows/files/files.messages';
import type { FilesDeps } from './deps';
import { receivedStagingKeyOf, type FileBucket } from './object-keys';
import { rejectFile } from './reject';
import { fileKindOf, largestFileBytes, sizeLimitOf } from './size-limits';
import { connectedScans, recordStagedFile, startScan } from './staging';
import { UNKNOWN_TYPE } from './upload';

/**
 * Resumable uploads with the tus protocol 1.0.0 (issue 17, beyond the specification;
 * docs/decisions/files.md, Resumable uploads), served by @tus/server with its S3 store in the
 * platform's bucket. A tus upload is a file like any other: created, it is recorded pending_scan
 * with its declared length counted into storage_bytes and a staging slot taken (staging.ts, as a
 * presigned upload), and its scan workflow starts waiting for the bytes (staged false); once the
 * last byte is stored the workflow is signalled fileStaged and scans it like a direct upload. An
 * upload never finished is rejected `upload-expired` by the workflow after FILES_STAGING_TTL_HOURS,
 * which gives both reservations back.
 *
 * The tus upload id is the file's staging key `{tenantId}/staging/{fileId}`, always derived from the
 * caller's tenant and the URL's file id, never read from the request: the store's object, its info
 * object and its incomplete part share the tenant's staging prefix, and another tenant's token names
 * a key of its own tenant, which holds no such upload (404).
 */

export interface TusDeps extends FilesDeps {
  /** The object store's address and keys: the tus S3 store brings its own client (the AWS SDK). */
  s3: Config['s3'];
  /** Undefined while the gateway is not connected to Temporal: a finished upload cannot be handed to its scan. */
  temporal(): TemporalHandle | undefined;
}

/** The Upload-Metadata of a creation, checked (api/routes/files/tus.schemas.ts). */
export interface TusUploadFields {
  bucket: FileBucket;
  originalName: string;
  /** As the client declares it; otherwise detected from the file's first bytes once they are stored. */
  mimeType?: string;
  meta?: Record<string, unknown>;
}

/** A tus request as the route hands it over. */
export interface TusRequest {
  method: string;
  /** The request's absolute URL. */
  url: string;
  /** The protocol's request headers (api/routes/files/tus.routes.ts passes only those). */
  headers: Record<string, string>;
  /** A PATCH's bytes. */
  body?: Readable;
}

/** A success of the tus server: its status and headers (tus answers carry no body). A refusal is thrown as a problem. */
export interface TusAnswer {
  status: number;
  headers: Record<string, string>;
}

/** What the tus server's hooks need of one request; the server hands the hooks the request only. */
interface TusCall {
  /** The tus upload id: the file's staging key. */
  stagingKey?: string;
  /** The Location of the upload a POST creates. */
  location?: string;
  /** The declared type, kept in the upload's metadata as `contentType` (the S3 store gives the object that type). */
  contentType?: string;
  /** Set by onUploadFinish: the upload whose last byte this request stored. */
  finished?: Upload;
  /** What failed inside the tus server, for the log (it answers a 500 with a text of its own). */
  failure?: unknown;
}

/** What a browser on another origin may read of a tus answer: tus' list, and the Upload-Expires it leaves out. */
export const TUS_EXPOSED_HEADERS = `${EXPOSED_HEADERS}, Upload-Expires`;

/** The extensions served: creation-with-upload and creation-defer-length are not (a length is declared, the body comes by PATCH). */
const TUS_EXTENSIONS = ['creation', 'termination', 'expiration'];

/** The upload infos the S3 store keeps in memory (about a kilobyte each). */
const INFO_CACHE_ENTRIES = 10_000;

/**
 * The S3 store's cache of upload infos, bounded: its default map keeps the info of every upload
 * never finished or terminated (those the scan workflow expires) for the life of the process. An
 * info evicted is read again from its `.info` object.
 */
class BoundedInfoCache implements KvStore<MetadataValue> {
  private readonly entries = new LRUCache<string, MetadataValue>({ max: INFO_CACHE_ENTRIES });

  get(key: string): Promise<MetadataValue | undefined> {
    return Promise.resolve(this.entries.get(key));
  }

  set(key: string, value: MetadataValue): Promise<void> {
    this.entries.set(key, value);
    return Promise.resolve();
  }

  delete(key: string): Promise<void> {
    this.entries.delete(key);
    return Promise.resolve();
  }
}

/** file-type's sample: the first bytes are enough to recognise every signature it knows. */
const TYPE_SAMPLE_BYTES = 4100;

/** rejected_reason of the uploads given up before their scan could start. */
const REASONS = {
  notCreated: 'upload-not-created',
  terminated: 'upload-terminated',
  tooLarge: 'too-large',
} as const;

/**
 * The tus store's own S3 client (the AWS SDK) reaches the object store as the platform's minio
 * clients do (common/object-store.ts): the same address, keys, request style and TLS (S3_CA_FILE's
 * agent; without it Node's built-in CAs).
 */
export function tusS3ClientConfig(s3: Config['s3'], bucket: string): S3StoreOptions['s3ClientConfig'] {
  const httpsAgent = s3HttpsAgent(s3);
  return {
    bucket,
    endpoint: `${s3.useSSL ? 'https' : 'http'}://${s3.endPoint}:${s3.port}`,
    region: s3.region,
    forcePathStyle: s3.pathStyle,
    ...(httpsAgent && { requestHandler: { httpsAgent } }),
    credentials: { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey },
    // The SDK's default checksums (aws-chunked trailers) are not what every S3-compatible store takes.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
}

export class TusUploads {
  private readonly server: Server;
  private readonly calls = new WeakMap<Request, TusCall>();
  /** How long an upload may stay incomplete: the staging TTL (its scan workflow's wait). */
  private readonly uploadTtlMs: number;

  constructor(private readonly deps: TusDeps) {
    this.uploadTtlMs = deps.settings.stagingTtlHours * 3_600_000;
    const datastore = new S3Store({
      s3ClientConfig: tusS3ClientConfig(deps.s3, deps.objectStore.bucket),
      // Upload-Expires tells the client the workflow's wait; the workflow, not the store, enforces it.
      expirationPeriodInMilliseconds: this.uploadTtlMs,
      useTags: false,
      cache: new BoundedInfoCache(),
    });
    datastore.extensions = TUS_EXTENSIONS;
    this.server = new Server({
      path: '/files/tus',
      datastore,
      maxSize: largestFileBytes(deps.settings),
      exposedHeaders: ['Upload-Expires'],
      // A finished upload belongs to its scan: only an incomplete one can be terminated.
      disableTerminationForFinishedUploads: true,
      namingFunction: (req) => this.stagingKeyOf(req),
      getFileIdFromRequest: (req) => this.stagingKeyOf(req),
      generateUrl: (req) => this.callOf(req).location ?? '',
      onUploadCreate: (req, upload) => {
        const { contentType } = this.callOf(req);
        return Promise.resolve({ metadata: { ...upload.metadata, ...(contentType && { contentType }) } });
      },
      onUploadFinish: (req, upload) => {
        this.callOf(req).finished = upload;
        return Promise.resolve({});
      },
      onResponseError: (req, error) => {
        this.callOf(req).failure = error;
        return undefined;
      },
    });
  }

  /**
   * POST: checks the declared length against the size limit of the declared type (of any file when
   * none is declared: 413), records the file and its reservations (402 over the plan, 503 at the
   * staging cap), starts its scan waiting for the bytes (503 if it cannot), then creates the upload
   * in the store. If the store fails, the file is given up at once.
   */
  async create(auth: AuthState, fields: TusUploadFields, uploadLength: number, request: TusRequest, locationOf: (fileId: string) => string): Promise<TusAnswer> {
    const { settings } = this.deps;
    const scans = connectedScans(this.deps);
    const declared = fields.mimeType;
    const limit = declared === undefined ? largestFileBytes(settings) : sizeLimitOf(declared, settings);
    if (uploadLength > limit) throw problems.fileTooLarge(limit, declared === undefined ? undefined : fileKindOf(declared));

    const fileId = newId();
    const row = await recordStagedFile(this.deps, auth, {
      id: fileId, bucket: fields.bucket, originalName: fields.originalName, mimeType: declared ?? UNKNOWN_TYPE,
      sizeBytes: uploadLength, sha256: null, meta: fields.meta ?? null, stagingKey: receivedStagingKeyOf(auth.tenantId, fileId),
    });
    await startScan(this.deps, scans, row, { uploadTtlMs: this.uploadTtlMs });
    try {
      return await this.run(request, row, { location: locationOf(row.id), ...(declared && { contentType: declared }) });
    } catch (error) {
      await this.giveUp(auth, row, REASONS.notCreated);
      throw error;
    }
  }

  /**
   * HEAD (the offset) and PATCH (bytes at the offset) of an upload of the caller's tenant still
   * waiting for its bytes; any other file, and another tenant's, is 404. When the upload is complete
   * it is handed to its scan (finish); a HEAD of a complete upload does it again, so a finish that
   * failed (Temporal unreachable) is repeated by the client's next HEAD, as tus clients do on resume.
   */
  async resume(auth: AuthState, fileId: string, request: TusRequest): Promise<TusAnswer> {
    const row = await this.waitingUpload(auth, fileId);
    const call: TusCall = {};
    const answer = await this.run(request, row, call);
    if (Number(answer.headers['upload-offset']) === row.sizeBytes) {
      const metadata = call.finished?.metadata ?? metadataOf(answer);
      await this.finish(auth, row, metadata.contentType ?? undefined);
    }
    return answer;
  }

  /** DELETE: an incomplete upload is removed and its file rejected `upload-terminated`, giving both reservations back. */
  async terminate(auth: AuthState, fileId: string, request: TusRequest): Promise<TusAnswer> {
    const row = await this.waitingUpload(auth, fileId);
    const answer = await this.run(request, row, {});
    await this.giveUp(auth, row, REASONS.terminated);
    return answer;
  }

  /** OPTIONS: the protocol's discovery (Tus-Version, Tus-Extension, Tus-Max-Size) and the CORS preflight. */
  async options(request: TusRequest): Promise<TusAnswer> {
    return this.run(request, null, {});
  }

  private async run(request: TusRequest, row: FileRow | null, call: TusCall): Promise<TusAnswer> {
    const webRequest = new Request(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body && { body: Readable.toWeb(request.body), duplex: 'half' }),
    });
    // The hooks find the call by the request and fill it in (finished, failure).
    if (row) call.stagingKey = row.stagingKey;
    this.calls.set(webRequest, call);
    const response = await this.server.handleWeb(webRequest);
    if (!response.ok) throw problemOfRefusal(response.status, (await response.text()).trim(), row, call.failure);
    const headers: Record<string, string> = {};
    // tus answers carry no body: the empty text's type and length are not the answer's.
    response.headers.forEach((value, name) => {
      if (name !== 'content-length' && name !== 'content-type') headers[name] = value;
    });
    return { status: response.status, headers };
  }

  private callOf(req: Request): TusCall {
    const call = this.calls.get(req);
    if (!call) throw new Error('a tus request that TusUploads did not hand over');
    return call;
  }

  private stagingKeyOf(req: Request): string {
    const { stagingKey } = this.callOf(req);
    if (!stagingKey) throw new Error('a tus request without its upload');
    return stagingKey;
  }

  /** The caller's file still waiting for its bytes; 404 file-not-found for any other (unknown, scanned, rejected, another tenant's). */
  private async waitingUpload(auth: AuthState, fileId: string): Promise<FileRow> {
    const { tenantId } = auth;
    const row = await withTenant(this.deps.db, tenantId, (tx) => selectFile(tx, tenantId, fileId));
    if (!row || row.status !== 'pending_scan') throw problems.fileNotFound(fileId);
    return row;
  }

  /**
   * The last byte is stored: a file whose client declared no type gets the one its first bytes show
   * (never its name), within that type's size limit (otherwise it is given up `too-large`, 413), and
   * its scan workflow is signalled fileStaged. Safe to repeat.
   */
  private async finish(auth: AuthState, row: FileRow, declared: string | undefined): Promise<void> {
    if (declared === undefined) {
      const mimeType = await this.detectType(row.stagingKey);
      const limit = sizeLimitOf(mimeType, this.deps.settings);
      if (row.sizeBytes > limit) {
        await this.giveUp(auth, row, REASONS.tooLarge);
        throw problems.fileTooLarge(limit, fileKindOf(mimeType));
      }
      const typed = await withTenant(this.deps.db, row.tenantId, (tx) => setPendingFileType(tx, row.tenantId, row.id, mimeType));
      if (!typed) throw problems.fileNotFound(row.id);
    }
    await this.signalStaged(row.id);
  }

  private async detectType(stagingKey: string): Promise<string> {
    const { s3, bucket } = this.deps.objectStore;
    const sample = await buffer(await s3.getPartialObject(bucket, stagingKey, 0, TYPE_SAMPLE_BYTES));
    return (await fileTypeFromBuffer(sample))?.mime ?? UNKNOWN_TYPE;
  }

  private async signalStaged(fileId: string): Promise<void> {
    const temporal = this.deps.temporal();
    if (!temporal) throw problems.unavailable('The workflow service is not connected; HEAD the upload again shortly to hand it to its scan');
    try {
      await temporal.client.workflow.getHandle(fileScanWorkflowId(fileId)).signal(fileStagedSignal);
    } catch (error) {
      // Its scan has ended (the wait ran out, or the file was given up): the row says where the file is.
      if (error instanceof WorkflowNotFoundError) return;
      throw problems.unavailable('The malware scan could not be told of the upload; HEAD the upload again to hand it over', error);
    }
  }

  /**
   * An upload that will never be scanned (terminated, not created, too large for its detected type):
   * rejected with its audit record, both reservations given back and whatever it stored removed
   * (reject.ts). Its scan workflow is signalled so that it ends now instead of at the upload TTL: it
   * finds the staged object gone and the file already rejected, and keeps the file's reason.
   */
  private async giveUp(auth: AuthState, row: FileRow, reason: string): Promise<void> {
    await rejectFile(
      { appPool: this.deps.db, objectStore: this.deps.objectStore }, { tenantId: row.tenantId, fileId: row.id },
      { reason, scanned: false }, { actorId: auth.userId, traceId: currentRequestContext()?.traceId },
    );
    await this.signalStaged(row.id).catch((error: unknown) => {
      this.deps.logger.warn({ err: error, fileId: row.id }, 'the scan workflow of a given-up upload was not signalled; it ends at its wait');
    });
  }
}

/** The Upload-Metadata a HEAD answers (the creation's, with the declared type as contentType). */
function metadataOf(answer: TusAnswer): Record<string, string | null> {
  const header = answer.headers['upload-metadata'];
  return header ? Metadata.parse(header) : {};
}

/**
 * A refusal of the tus server as a problem of the registry. The route's guard has checked the
 * protocol's headers already, so what remains is the upload's own state: unknown or expired (404),
 * an offset that is not the upload's (409), more bytes than declared (413), a finished upload
 * terminated (409), and failures of the store (500, logged with their cause).
 */
function problemOfRefusal(status: number, text: string, row: FileRow | null, failure: unknown): Problem {
  const fileId = row?.id ?? 'upload';
  switch (status) {
    case 404:
    case 410:
      return problems.fileNotFound(fileId);
    case 409:
      return problems.conflict(`Upload-Offset is not the offset of upload ${fileId}; HEAD it for the offset to resume from`);
    case 413:
      return problems.payloadTooLarge(`the upload's declared length${row ? ` (${row.sizeBytes} bytes)` : ''}`);
    case 400:
      return text.startsWith('Cannot terminate')
        ? problems.conflict(`Upload ${fileId} is complete and belongs to its malware scan; it cannot be terminated`)
        : problems.validation([{ field: 'headers', code: 'TUS_PROTOCOL', message: text }], text);
    default:
      return status < 500
        ? problems.validation([{ field: 'headers', code: 'TUS_PROTOCOL', message: text }], text)
        : problems.internal(failure ?? new Error(`the tus server answered ${status}: ${text}`));
  }
}
