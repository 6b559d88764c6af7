import Joi from 'joi';
import { Metadata, TUS_RESUMABLE } from '@tus/server';
import { Problem, problems } from '../../../common/problems';
import { FILE_BUCKETS } from '../../../services/files/object-keys';
import type { TusUploadFields } from '../../../services/files/tus';
import { uuid } from '../../http/ids';
import { validatedPart } from '../../middleware/validation-guard';
import { bucket, metaJson, mimeType } from './files.schemas';

/**
 * Request schemas of the tus routes (services/files/tus.ts; docs/decisions/files.md, Resumable
 * uploads). tus carries everything in headers: the guard checks the ones each route reads; the
 * creation's Upload-Metadata is decoded (tus: comma-separated `key base64(value)` pairs) and then
 * checked like the fields of an upload.
 */

/** The media type of a PATCH's bytes (tus 1.0.0). */
export const TUS_CHUNK_TYPE = 'application/offset+octet-stream';

/** The Upload-Metadata header's longest value: the fields of an upload, base64-encoded, meta (4 KB) included. */
const METADATA_MAX_CHARS = 8192;

const tusResumable = Joi.string().valid(TUS_RESUMABLE).required()
  .description(`The protocol version, ${TUS_RESUMABLE}; any other (or none) is 400 validation-error`);

export interface TusHeaders {
  'Tus-Resumable': string;
}

export const tusHeaders = Joi.object<TusHeaders>({ 'Tus-Resumable': tusResumable });

export interface TusCreateHeaders extends TusHeaders {
  'Upload-Length': number;
  'Upload-Metadata': string;
}

export const tusCreateHeaders = Joi.object<TusCreateHeaders>({
  'Tus-Resumable': tusResumable,
  'Upload-Length': Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER).required().description(
    'The file\'s size in bytes, declared up front (Upload-Defer-Length is not served). Images (image/*) up to '
    + 'FILES_MAX_IMAGE_SIZE_MB (10 MB), other files up to FILES_MAX_DOCUMENT_SIZE_MB (50 MB); without a declared type, the '
    + 'larger limit now and the detected type\'s once the bytes are in (413 payload-too-large). Not empty.'),
  'Upload-Metadata': Joi.string().max(METADATA_MAX_CHARS).required().description(
    'Comma-separated `key base64(value)` pairs: bucket (required; one of the five, otherwise 400 bucket-invalid), '
    + 'originalName (required; tus clients\' filename is taken for it), mimeType (optional; tus clients\' filetype is taken '
    + 'for it; otherwise detected from the first bytes once they are all in), meta (optional JSON object, at most 4 KB). '
    + 'Any other key is 400 validation-error.'),
});

export interface TusPatchHeaders extends TusHeaders {
  'Upload-Offset': number;
  'Content-Type': string;
}

export const tusPatchHeaders = Joi.object<TusPatchHeaders>({
  'Tus-Resumable': tusResumable,
  'Upload-Offset': Joi.number().integer().min(0).max(Number.MAX_SAFE_INTEGER).required()
    .description('Where these bytes start: the offset a HEAD answers (another is 409 conflict)'),
  'Content-Type': Joi.string().valid(TUS_CHUNK_TYPE).required()
    .error((errors) => problems.unsupportedMediaType(sentValueOf(errors[0]), TUS_CHUNK_TYPE))
    .description(`${TUS_CHUNK_TYPE}; any other is 415 unsupported-media-type`),
});

/** The value a header failed with, as sent ('' when it was not). */
function sentValueOf(error: Joi.ErrorReport | Error | undefined): string {
  const value = (error as { local?: { value?: unknown } } | undefined)?.local?.value;
  return typeof value === 'string' ? value : '';
}

/** A PATCH's body as the document shows it: the upload's next bytes. */
export const tusChunk = Joi.binary().description('The upload\'s bytes from Upload-Offset on; at most what remains of Upload-Length');

export interface TusUploadParams {
  id: string;
}

export const tusUploadParams = Joi.object<TusUploadParams>({
  id: uuid.required().description('The file id: the last segment of the Location the creation answered'),
});

/**
 * The creation's metadata as fields of an upload (files.schemas.ts's rules). tus clients name the
 * file `filename` and its type `filetype` by convention: taken as originalName and mimeType (one
 * name of each pair, not both).
 */
export const tusMetadata = Joi.object<TusUploadFields>({
  bucket: bucket.required().description(`One of ${FILE_BUCKETS.join(', ')}`),
  originalName: Joi.string().max(255).required(),
  mimeType,
  meta: metaJson,
}).rename('filename', 'originalName').rename('filetype', 'mimeType');

/** Upload-Metadata decoded; a header that breaks the protocol's grammar is 400 validation-error. */
export function decodedMetadata(header: string): Record<string, string | null> {
  try {
    return Metadata.parse(header);
  } catch {
    throw problems.validation([{
      field: 'Upload-Metadata', code: 'INVALID_VALUE',
      message: 'must be comma-separated pairs of a key and its base64 value, each key once',
    }]);
  }
}

/**
 * The creation's Upload-Metadata, decoded and checked as the fields of an upload. A refused field is
 * named inside the header (`Upload-Metadata.bucket`): the client sent no field of that name anywhere else.
 */
export function checkedMetadata(header: string): TusUploadFields {
  try {
    return validatedPart(tusMetadata, decodedMetadata(header), 'Upload-Metadata');
  } catch (error) {
    if (!(error instanceof Problem) || error.type !== 'validation-error') throw error;
    const errors = (error.extensions.errors ?? []).map((fieldError) => ({ ...fieldError, field: `Upload-Metadata.${fieldError.field}` }));
    throw problems.validation(errors, error.detail);
  }
}
