import { pipeline, Transform, type Readable } from 'node:stream';

/**
 * slonik's `stream` hands out `{data, fields}` per row; readers of a streamed query want the rows
 * alone. Rows are fetched only as fast as they are read (the cursor's backpressure), and destroying
 * the returned stream (a client that went away, a failed upload) destroys the query's stream too,
 * which ends the query. Errors of the query reach the caller through the promise `stream` returns.
 */
export function rowsOf(stream: unknown): Readable {
  const rows = new Transform({
    objectMode: true,
    transform(row: { data: unknown }, _encoding, done) {
      done(null, row.data);
    },
  });
  return pipeline(stream as Readable, rows, () => undefined);
}
