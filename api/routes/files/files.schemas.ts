import Joi from 'joi';
import type { EitherPageQuery } from '../../../common/pagination';
import { problems } from '../../../common/problems';
import { FILE_BUCKETS, type FileBucket } from '../../../services/files/object-keys';
import type { UploadFields } from '../../../services/files/upload';
import { FILE_STATUSES, type FileStatus } from '../../../services/files/views';
import { uuid } from '../../http/ids';
import { eitherPageOf, eitherPageOnly, eitherPageQuery } from '../../http/pagination';
import { fileProcessing } from './process.schemas';

/** Request and response schemas of the files routes (docs/reference/files.md#resources; camelCase). */

const META_MAX_BYTES = 4096;

/**
 * A media type as RFC 6838 names it (type/subtype, optional parameters). It becomes a header value
 * (the stored object's Content-Type, the download's), so parameters hold printable ASCII and spaces
 * only: no line breaks, no tabs.
 */
export const mimeType = Joi.string().max(255).pattern(/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*( *;[\x20-\x7E]*)?$/, 'media type');

/**
 * A value other than the five buckets is 400 bucket-invalid (docs/reference/files.md#rule-1), not a
 * validation-error; a missing bucket is one (REQUIRED), like any missing field.
 */
export const bucket = Joi.string().valid(...FILE_BUCKETS)
  .error((errors) => (errors.some((error) => error.code === 'any.required') ? errors : problems.bucketInvalid(FILE_BUCKETS)));

class PrototypeKey extends Error {}

/** What JSON bodies refuse (PROTOTYPE_KEY_RULE): a __proto__ key, a constructor key holding prototype. */
function refusePrototypeKeys(key: string, value: unknown): unknown {
  if (key === '__proto__' || (key === 'constructor' && value !== null && typeof value === 'object' && 'prototype' in value)) {
    throw new PrototypeKey('must not have a __proto__ key, nor a constructor key holding prototype');
  }
  return value;
}

/** `meta` arrives as text (a multipart field, a tus Upload-Metadata value): a JSON object, handed on parsed. */
export const metaJson = Joi.string().max(META_MAX_BYTES).custom((text: string) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, refusePrototypeKeys);
  } catch (error) {
    throw error instanceof PrototypeKey ? error : new Error('must be JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('must be a JSON object');
  return parsed;
}, 'JSON object');

/**
 * The text fields of POST /files/upload, checked once the form is read, and as far as they go when
 * the file part starts (services/files/upload.ts). Also what the document shows, with the file part.
 */
const uploadFieldKeys = {
  bucket: bucket.required().description(`One of ${FILE_BUCKETS.join(', ')}; any other is 400 bucket-invalid`),
  originalName: Joi.string().max(255).required().description('The file\'s name as the user knows it (at most 255 characters)'),
  mimeType: mimeType.description('The file\'s media type; without it, detected from its first bytes (application/octet-stream when unknown), never from its name'),
  meta: metaJson.description(`A JSON object, as text of at most ${META_MAX_BYTES} bytes`),
};

export const uploadFields = Joi.object<UploadFields>(uploadFieldKeys);

/** The fields sent before the file part: what is there is checked, what is missing may still come. */
export const uploadFieldsSent = uploadFields.fork(['bucket', 'originalName'], (key) => key.optional());

/**
 * What the document shows: the fields and the file part. `meta` is a JSON object, which a multipart
 * body carries as the part's JSON text (OpenAPI's default encoding of an object property).
 */
export const uploadForm = Joi.object({
  ...uploadFieldKeys,
  meta: Joi.object().unknown(true).description(`A JSON object; its JSON text is at most ${META_MAX_BYTES} bytes`),
  file: Joi.binary().required().description(
    'The file\'s bytes, best sent after the text fields. Images (image/*) up to FILES_MAX_IMAGE_SIZE_MB (10 MB), '
    + 'other files up to FILES_MAX_DOCUMENT_SIZE_MB (50 MB); larger is 413 payload-too-large. Not empty.'),
});

const isoTime = Joi.string().isoDate();

export const file = Joi.object({
  id: Joi.string().uuid().required(),
  originalName: Joi.string().required(),
  mimeType: Joi.string().required(),
  size: Joi.number().integer().min(0).required(),
  bucket: Joi.string().valid(...FILE_BUCKETS).required(),
  status: Joi.string().valid('pending_scan', 'available', 'rejected', 'deleted').required(),
  url: Joi.string().uri().allow(null).required().description('A presigned GET of the file (valid 300 s) while it is available; otherwise null'),
  uploadedBy: Joi.string().uuid().allow(null).required(),
  tenantId: Joi.string().uuid().required(),
  createdAt: isoTime.required(),
  deletedAt: isoTime.allow(null).required(),
});

export const fileDetails = file.keys({
  meta: Joi.object().unknown(true).allow(null).required().description('The meta sent with the upload'),
  thumbnails: Joi.object().pattern(Joi.string(), Joi.string().uri()).required()
    .description('Presigned GETs of the thumbnails generated so far (valid 300 s), by preset'),
  processing: fileProcessing,
});

export interface FileIdParams {
  id: string;
}

export const fileIdParams = Joi.object<FileIdParams>({ id: uuid.required() });

export interface FileReadQuery {
  download?: 0 | 1;
  meta?: 0 | 1;
}

export const fileReadQuery = Joi.object<FileReadQuery>({
  download: Joi.number().valid(0, 1).description('1: answer 200 with the bytes (Content-Disposition: attachment)'),
  meta: Joi.number().valid(0, 1).description('1: answer 200 with the file object, its meta and thumbnails'),
}).oxor('download', 'meta');

export interface FileUrlQuery {
  ttlSeconds: number;
}

export const fileUrlQuery = Joi.object<FileUrlQuery>({
  ttlSeconds: Joi.number().integer().min(1).max(86_400).default(300).description('How long the URL works (1 to 86400 s, default 300)'),
});

export const fileUrl = Joi.object({
  url: Joi.string().uri().required(),
  expiresAt: isoTime.required(),
});

export interface FileListQuery extends EitherPageQuery {
  bucket?: FileBucket;
  status?: Exclude<FileStatus, 'purged'>;
  uploadedBy?: string;
}

export const fileListQuery = eitherPageOnly(Joi.object<FileListQuery>({
  bucket,
  status: Joi.string().valid(...FILE_STATUSES.filter((status) => status !== 'purged')),
  uploadedBy: uuid.description('The uploading user\'s id'),
  ...eitherPageQuery,
}));

export const filePage = eitherPageOf(file);

/** The operations that take a file's id, which an upload's and a presigned upload's answers feed (OpenAPI links). */
export const FILE_OPERATIONS = ['files.url', 'files.get', 'files.delete', 'files.restore', 'files.deletePermanently', 'files.thumbnail', 'files.process'];
