import Joi from 'joi';
import { FILE_BUCKETS } from '../../../services/files/object-keys';
import type { PresignRequest } from '../../../services/files/presign';
import { bucket, mimeType } from './files.schemas';

/** Request and response of POST /files/presign (docs/reference/files.md#rule-8; camelCase). */

export const presignRequest = Joi.object<PresignRequest>({
  bucket: bucket.required().description(`One of ${FILE_BUCKETS.join(', ')}; any other is 400 bucket-invalid`),
  originalName: Joi.string().max(255).required().description('The file\'s name as the user knows it (at most 255 characters)'),
  mimeType: mimeType.required().description('The file\'s media type: the PUT must send exactly this Content-Type'),
  sizeBytes: Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER).required().description(
    'The file\'s size in bytes: the PUT must send exactly this Content-Length. Images (image/*) up to FILES_MAX_IMAGE_SIZE_MB '
    + '(10 MB), other files up to FILES_MAX_DOCUMENT_SIZE_MB (50 MB); larger is 413 payload-too-large. Not empty.'),
});

export const presignedUpload = Joi.object({
  uploadUrl: Joi.string().uri().required().description('PUT the file\'s bytes here, with the Content-Type of `fields` and Content-Length sizeBytes'),
  fileId: Joi.string().uuid().required(),
  expiresAt: Joi.string().isoDate().required().description('When uploadUrl stops working (FILES_PRESIGN_TTL_MIN after the request, 15 minutes)'),
  fields: Joi.object({
    'Content-Type': Joi.string().required().description('The header the PUT must send, as signed'),
    key: Joi.string().required().description('The object\'s key in the store (the tenant\'s private staging area)'),
  }).required(),
});
