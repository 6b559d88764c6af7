/**
 * What the files service and the processing workflow (workflows/files/process.workflow.ts) exchange.
 * Bundled into the workflow sandbox, so only types and pure definitions live here.
 */

/** The formats POST /files/:id/process can convert to (docs/reference/files.md#rule-16). */
export const OUTPUT_FORMATS = ['webp', 'png', 'jpeg', 'avif'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** docs/reference/files.md#rule-16: rotate {degrees: 90, 180 or 270}, clockwise. */
export const ROTATIONS = [90, 180, 270] as const;

/** One operation of a job, applied in the order given (docs/decisions/files.md, Processing: `{crop: {...}} | {resize: {...}} | ...`). */
export type ImageOperation =
  | { crop: { x: number; y: number; width: number; height: number } }
  | { resize: { width?: number; height?: number } }
  | { convert: { format: OutputFormat } }
  | { rotate: { degrees: (typeof ROTATIONS)[number] } };

export interface FileProcessInput {
  tenantId: string;
  fileId: string;
  /** The job's local id (its public id is `files-process.<jobId>`): names the workflow and the new content's key. */
  jobId: string;
  operations: ImageOperation[];
  /** 1 to 100 (default 85): the encoder's quality for JPEG, WebP and AVIF; PNG is lossless and ignores it. */
  quality: number;
  /**
   * FILES_IMAGE_PROCESSING_TIMEOUT_SEC in milliseconds: one attempt at processing the image (and at
   * rendering its thumbnails) gets this long; a slower one is abandoned and retried. Workflows read
   * no configuration, so the starter sends it.
   */
  attemptTimeoutMs: number;
  /** How long the attempts may go on before the job ends failed (processing-failed), the original kept. */
  retryWindowMs: number;
}

/** The processed content, as a completed job's result (GET /v1/jobs/{jobId}). */
export interface ProcessedFile {
  fileId: string;
  mimeType: string;
  size: number;
  width: number;
  height: number;
}

/**
 * How a job ends. A refusal (an image sharp cannot read or an operation that does not fit it, a file
 * deleted meanwhile) is an outcome, not a failure: the workflow completes with it and the job kind
 * renders it as a failed job with its problem. Only a real fault (a bug) fails the workflow.
 */
export type FileProcessResult =
  | ({ status: 'completed' } & ProcessedFile)
  | { status: 'failed'; fileId: string; problem: 'processing-failed' | 'file-not-found'; detail: string };

/** The processing workflow of a job, named for the Temporal UI. */
export function fileProcessWorkflowId(jobId: string): string {
  return `files.process:${jobId}`;
}
