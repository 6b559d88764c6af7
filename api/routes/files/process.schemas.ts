import Joi from 'joi';
import type { FileProcessRequest } from '../../../services/files/process';
import { OUTPUT_FORMATS, ROTATIONS } from '../../../workflows/files/process.messages';

/** Request and response schemas of POST /files/:id/process (docs/reference/files.md#rule-16; docs/decisions/files.md, Processing). */

/** At most this many operations in one job: enough for any real edit, few enough to bound one attempt's passes. */
export const MAX_OPERATIONS = 20;

/** The largest side a resize may ask for: 10 000 px (a 100-megapixel image). */
const MAX_SIDE = 10_000;

const side = Joi.number().integer().min(1).max(MAX_SIDE);
const offset = Joi.number().integer().min(0).max(MAX_SIDE * 10);

const crop = Joi.object({
  x: offset.required().description('Left edge, in pixels of the image as it reaches this operation'),
  y: offset.required().description('Top edge'),
  width: side.required(),
  height: side.required(),
}).description('Cuts out the rectangle; it must lie inside the image (otherwise 422 processing-failed)');

const resize = Joi.object({ width: side, height: side }).or('width', 'height')
  .description('With one side, keeps the aspect ratio; with both, the image is cut to that box (cover, centred). May enlarge.');

const convert = Joi.object({ format: Joi.string().valid(...OUTPUT_FORMATS).required() })
  .description('The format the result is written in; without one, the source\'s (PNG for a source format the API does not write)');

const rotate = Joi.object({ degrees: Joi.number().valid(...ROTATIONS).required() }).description('Clockwise');

/** One operation: an object with exactly one of crop, resize, convert, rotate. Any other member is 400. */
const operation = Joi.object({ crop, resize, convert, rotate }).xor('crop', 'resize', 'convert', 'rotate');

export const processBody = Joi.object<FileProcessRequest>({
  operations: Joi.array().items(operation).min(1).max(MAX_OPERATIONS).required()
    .description('Applied in the order given, after the EXIF orientation'),
  quality: Joi.number().integer().min(1).max(100).default(85)
    .description('1 to 100: the encoder\'s quality for JPEG, WebP and AVIF; PNG is lossless and ignores it'),
});

export const processAccepted = Joi.object({
  fileId: Joi.string().uuid().required(),
  jobId: Joi.string().required().description('files-process.<id>: GET /v1/jobs/{jobId} follows it'),
  status: Joi.string().valid('processing').required(),
  startedAt: Joi.string().isoDate().required(),
});

/** The file's latest processing job, as GET /files/:id?meta=1 shows it. */
export const fileProcessing = Joi.object({
  jobId: Joi.string().required(),
  status: Joi.string().valid('processing', 'completed', 'failed').required(),
  startedAt: Joi.string().isoDate().required(),
  completedAt: Joi.string().isoDate().allow(null).required(),
}).description('The latest processing job (GET /v1/jobs/{jobId} has its result or error); absent if the file was never processed');

/** A completed processing job's result (GET /v1/jobs/{jobId}). */
export const processedFile = Joi.object({
  fileId: Joi.string().uuid().required(),
  mimeType: Joi.string().required(),
  size: Joi.number().integer().min(0).required(),
  width: Joi.number().integer().min(1).required(),
  height: Joi.number().integer().min(1).required(),
});
