import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { Problem } from '../../../common/problems';
import { readMultipartForm, type MultipartRules } from '../../../services/files/multipart-form';

/**
 * The upload form's rules (services/files/multipart-form.ts), over in-memory bodies: text fields and
 * one file part in any order, each rule's refusal with its field and code.
 */

const BOUNDARY = 'x-boundary';
type Part = { name: string; value: string } | { name: string; filename: string; content: string };

function bodyOf(parts: readonly Part[], complete = true): Buffer {
  const encoded = parts.map((part) => ('filename' in part
    ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\n`
      + `Content-Type: application/octet-stream\r\n\r\n${part.content}\r\n`
    : `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`)).join('');
  return Buffer.from(complete ? `${encoded}--${BOUNDARY}--\r\n` : encoded);
}

class TooLarge extends Error {}

const rules: MultipartRules = { fileField: 'file', maxFields: 3, maxFieldBytes: 16, maxFileBytes: 10, tooLarge: () => new TooLarge('too large') };

/** Reads the form; onFile answers the fields it got and the file's text. */
function read(body: Buffer, contentType = `multipart/form-data; boundary=${BOUNDARY}`) {
  return readMultipartForm({ headers: { 'content-type': contentType }, body: Readable.from([body]) }, rules,
    async (fields, file) => ({ fields, content: await text(file) }));
}

async function refusal(reading: Promise<unknown>): Promise<unknown> {
  const error = await reading.then(() => undefined, (failure: unknown) => failure);
  expect(error).toBeInstanceOf(Problem);
  const problem = error as Problem;
  return { type: problem.type, errors: problem.extensions.errors?.map(({ field, code }) => ({ field, code })) };
}

const file = { name: 'file', filename: 'a.bin', content: 'hello' };

describe('readMultipartForm', () => {
  it('hands onFile the fields sent before the file and the file\'s bytes; answers every field and what onFile answered', async () => {
    await expect(read(bodyOf([{ name: 'bucket', value: 'assets' }, file, { name: 'originalName', value: 'a.bin' }]))).resolves.toEqual({
      fields: { bucket: 'assets', originalName: 'a.bin' },
      file: { fields: { bucket: 'assets' }, content: 'hello' },
    });
  });

  it('takes a field of exactly maxFieldBytes', async () => {
    await expect(read(bodyOf([file, { name: 'meta', value: 'x'.repeat(16) }]))).resolves.toMatchObject({ fields: { meta: 'x'.repeat(16) } });
  });

  it('takes a file of exactly maxFileBytes, and fails a larger one with tooLarge()', async () => {
    await expect(read(bodyOf([{ ...file, content: '0123456789' }]))).resolves.toMatchObject({ file: { content: '0123456789' } });
    await expect(read(bodyOf([{ ...file, content: '0123456789A' }]))).rejects.toBeInstanceOf(TooLarge);
  });

  it.each<[string, Part[], { field: string; code: string }]>([
    ['a field twice', [{ name: 'bucket', value: 'a' }, { name: 'bucket', value: 'b' }, file], { field: 'bucket', code: 'DUPLICATE_VALUE' }],
    ['a field over maxFieldBytes', [{ name: 'meta', value: 'x'.repeat(17) }, file], { field: 'meta', code: 'TOO_LONG' }],
    ['a field over maxFieldBytes after the file', [file, { name: 'meta', value: 'x'.repeat(17) }], { field: 'meta', code: 'TOO_LONG' }],
    ['more fields than maxFields', ['a', 'b', 'c', 'd'].map((name) => ({ name, value: '1' })), { field: 'body', code: 'TOO_LONG' }],
    ['a file part of another name', [{ ...file, name: 'upload' }], { field: 'upload', code: 'UNKNOWN_FIELD' }],
    ['a second file', [file, file], { field: 'file', code: 'DUPLICATE_VALUE' }],
    ['no file', [{ name: 'bucket', value: 'assets' }], { field: 'file', code: 'REQUIRED' }],
    ['__proto__ twice (an ordinary field name)', [{ name: '__proto__', value: '1' }, { name: '__proto__', value: '2' }, file],
      { field: '__proto__', code: 'DUPLICATE_VALUE' }],
  ])('refuses %s: 400 validation-error', async (_rule, parts, error) => {
    expect(await refusal(read(bodyOf(parts)))).toEqual({ type: 'validation-error', errors: [error] });
  });

  it('refuses a body that ends before the form does', async () => {
    expect(await refusal(read(bodyOf([{ name: 'bucket', value: 'assets' }, file], false))))
      .toEqual({ type: 'validation-error', errors: [{ field: 'body', code: 'INVALID_FORMAT' }] });
  });

  it('refuses a body that is not multipart/form-data: 415', async () => {
    expect(() => read(Buffer.from('{}'), 'application/json')).toThrow(expect.objectContaining({ type: 'unsupported-media-type' }));
    expect(() => read(Buffer.from('{}'), 'multipart/form-data')).toThrow(expect.objectContaining({ type: 'unsupported-media-type' }));
  });

  it('refuses the fields when onFile throws at once, before the file is read', async () => {
    const refused = new Error('bucket refused');
    const reading = readMultipartForm({ headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body: Readable.from([bodyOf([file])]) },
      rules, () => { throw refused; });
    await expect(reading).rejects.toBe(refused);
  });
});
