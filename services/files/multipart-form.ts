import type { IncomingHttpHeaders } from 'node:http';
import { finished, type Readable } from 'node:stream';
import busboy from 'busboy';
import { problems, type FieldError } from '../../common/problems';

/** A request whose body has not been read: its headers and the stream of its bytes. */
export interface StreamedRequest {
  headers: IncomingHttpHeaders;
  body: Readable;
}

export interface MultipartRules {
  /** The name of the form's one file part. */
  fileField: string;
  /** At most this many text fields, each at most maxFieldBytes long (400 TOO_LONG above). */
  maxFields: number;
  maxFieldBytes: number;
  /** The file part's bytes beyond which the parser stops reading it; the file then fails with tooLarge(). */
  maxFileBytes: number;
  tooLarge(): Error;
}

const refusal = (field: string, code: string, message: string) => problems.validation([{ field, code, message } satisfies FieldError]);

/** A form once its body has been read: every text field, and what onFile answered. */
export interface MultipartForm<T> {
  fields: Readonly<Record<string, string>>;
  file: T;
}

/**
 * Reads a multipart/form-data body with one file part and a few text fields, in any order
 * (docs/decisions/files.md): `onFile` is called when the file part starts, with the fields sent so
 * far (a synchronous throw refuses them before a byte of the file is taken) and the file's bytes as
 * they arrive; once the whole body has been read, the form answers every field and what onFile
 * answered. Nothing of the body is held beyond the text fields.
 *
 * Refused (400 validation-error, the first refusal wins): a field twice, a field over
 * maxFieldBytes, more than maxFields fields, a part that is not a field of the form, a second file,
 * no file, a body that is not well-formed multipart, a body that ends early. A refusal, or onFile
 * failing, stops the file part at once (onFile's own pipeline fails with it) and waits for onFile to
 * settle, so nothing is still being written when the caller cleans up; the rest of the body is read
 * and dropped, so a client still sending gets the answer (a 413 also closes the connection).
 */
export function readMultipartForm<T>(
  request: StreamedRequest,
  rules: MultipartRules,
  onFile: (fields: Readonly<Record<string, string>>, file: Readable) => Promise<T>,
): Promise<MultipartForm<T>> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: request.headers,
      limits: {
        // busboy flags a field or file that reaches its size: one byte more lets exactly the maximum through.
        fields: rules.maxFields, fieldSize: rules.maxFieldBytes + 1, files: 1, fileSize: rules.maxFileBytes + 1,
      },
    });
  } catch {
    // No multipart/form-data content type, or one without a boundary.
    throw problems.unsupportedMediaType(request.headers['content-type'] ?? '', 'multipart/form-data');
  }

  return new Promise<MultipartForm<T>>((resolve, reject) => {
    // No prototype: a part named __proto__ is a field like any other (and refused as unknown).
    const fields = Object.create(null) as Record<string, string>;
    let file: Readable | undefined;
    let handling: Promise<T> | undefined;
    let failed = false;

    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      request.body.unpipe(parser);
      request.body.resume();
      file?.destroy(error instanceof Error ? error : undefined);
      parser.destroy();
      const settled = handling?.then(() => undefined, () => undefined) ?? Promise.resolve();
      void settled.then(() => reject(error));
    };

    // A refusal stops the parser, but the events of the chunk it is in still come: they change nothing.
    parser.on('field', (name, value, info) => {
      if (failed) return;
      if (info.nameTruncated) fail(refusal('body', 'UNKNOWN_FIELD', 'has a part with an overlong name'));
      else if (info.valueTruncated) fail(refusal(name, 'TOO_LONG', `is longer than ${rules.maxFieldBytes} bytes`));
      else if (Object.hasOwn(fields, name)) fail(refusal(name, 'DUPLICATE_VALUE', 'is sent twice'));
      else fields[name] = value;
    });
    parser.on('file', (name, stream) => {
      // A part's failures reach onFile's pipeline; one that comes before anyone reads it (a refusal,
      // the parser stopped) has no one else to tell.
      stream.on('error', () => undefined);
      if (failed || name !== rules.fileField) {
        stream.resume();
        if (!failed) fail(refusal(name, 'UNKNOWN_FIELD', `is not a field of this form (the file part is ${rules.fileField})`));
        return;
      }
      file = stream;
      // busboy stops at maxFileBytes and ends the stream as if the file were complete (`truncated`):
      // failing it instead keeps a cut-off file from ever being stored.
      stream.once('limit', () => stream.destroy(rules.tooLarge()));
      try {
        handling = onFile({ ...fields }, stream);
      } catch (error) {
        // The fields are refused before a byte of the file is taken.
        fail(error);
        return;
      }
      handling.catch(fail);
    });
    parser.on('filesLimit', () => fail(refusal(rules.fileField, 'DUPLICATE_VALUE', 'is sent more than once')));
    parser.on('fieldsLimit', () => fail(refusal('body', 'TOO_LONG', `has more than ${rules.maxFields} fields`)));
    parser.on('error', (error: Error) => fail(refusal('body', 'INVALID_FORMAT', `is not a well-formed multipart/form-data body (${error.message})`)));
    parser.on('finish', () => {
      if (failed) return;
      if (!handling) fail(refusal(rules.fileField, 'REQUIRED', 'is required'));
      else handling.then((answer) => resolve({ fields, file: answer }), fail);
    });
    // A client that goes away mid-body never ends the parser: its file fails instead of waiting forever.
    finished(request.body, { readable: true, writable: false }, (error) => {
      if (error) fail(refusal('body', 'INVALID_FORMAT', 'ended before the form was complete'));
    });
    request.body.pipe(parser);
  });
}
