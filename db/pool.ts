import {
  createPool, createTypeParserPreset, sql, SchemaValidationError,
  type DatabasePool, type DatabaseTransactionConnection, type DriverTypeParser, type Interceptor, type QueryResultRow, type QuerySqlToken,
} from 'slonik';
import { config } from '../common/config';
import { pgSsl, type DatabaseSsl } from './pg-ssl';

export { sql };
export type { DatabasePool, DatabaseTransactionConnection };

/**
 * Rows come back in the shapes the API speaks: int8 as a JS number (counts and amounts in minor
 * units stay far below 2^53), timestamps as ISO 8601 strings.
 */
export const typeParsers: readonly DriverTypeParser[] = [
  ...createTypeParserPreset().filter((p) => !['int8', 'timestamp', 'timestamptz'].includes(p.name)),
  { name: 'int8', parse: (value: string) => Number(value) },
  { name: 'timestamptz', parse: (value: string) => isoOfPgTimestamp(value) },
  { name: 'timestamp', parse: (value: string) => isoOfPgTimestamp(`${value}+00`) },
];

const PG_TIMESTAMP = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?)([+-]\d{2})(?::(\d{2}))?(?::(\d{2}))?$/;

/**
 * PostgreSQL's text form of a timestamp ("2024-05-01 10:00:00.5+00"; the offset in hours, with
 * minutes and, before 1901 in some zones, seconds) as ISO 8601. It is rewritten into ISO form
 * first: V8 reads other forms by guesswork, and read a year below 100 ("0013-10-06 ...") as an
 * Invalid Date, so an audit export of such a range answered 500 (found by the API fuzzer).
 */
export function isoOfPgTimestamp(value: string): string {
  const parts = PG_TIMESTAMP.exec(value);
  if (!parts) return new Date(value).toISOString();
  const [, date, time, hours, minutes = '00', seconds = '00'] = parts;
  const offsetSeconds = (hours.startsWith('-') ? -1 : 1) * Number(seconds);
  return new Date(Date.parse(`${date}T${time}${hours}:${minutes}`) - offsetSeconds * 1000).toISOString();
}

/**
 * Validates each row against the query's `sql.type(schema)`, as the slonik README advises, but in
 * slonik's synchronous row hook: with an asynchronous one (transformRowAsync) slonik awaits every row
 * of every query, typed or not, which cost about 40 µs of CPU per 21-row page here (10 % of a
 * tenant transaction's client side). Every schema of ours is synchronous (zod without async
 * refinements); one that is not fails loudly instead of being awaited.
 */
const resultParser: Interceptor = {
  name: 'result-parser',
  transformRow: (context, query, row) => (context.resultParser ? validatedRow(context.resultParser, query, row) : row),
};

/** A row of `query` validated by its schema (sql.type), synchronously: the parsed row, or SchemaValidationError. */
export function validatedRow(schema: QuerySqlToken['parser'], query: Pick<QuerySqlToken, 'sql' | 'values'>, row: Record<string, unknown>): QueryResultRow {
  const result = schema['~standard'].validate(row);
  if (result instanceof Promise) throw new Error('A result schema must validate synchronously (no async refinements)');
  if (result.issues) throw new SchemaValidationError({ sql: query.sql, values: query.values }, row as QueryResultRow, result.issues);
  return result.value as QueryResultRow;
}

export interface PoolOptions {
  maxPoolSize?: number;
  name?: string;
  /** TLS to the server; default: the process's (DATABASE_SSL_MODE, DATABASE_SSL_CA_FILE). */
  ssl?: DatabaseSsl;
}

/**
 * slonik's own transaction retry re-runs a failed transaction at once and without a bound we
 * choose; it is switched off so retries happen where they are counted (docs/reference/money.md#rule-9: 100/200/400 ms).
 * Its default connection reset (DISCARD ALL on every release, one more round trip per query) is off
 * too: nothing here changes session state (the tenant setting is transaction-local, locks are
 * transaction-scoped, no temporary tables or prepared statements are kept), so there is nothing to reset.
 * TLS: db/pg-ssl.ts.
 */
export async function createDbPool(url: string, { maxPoolSize = 10, name = 'app', ssl = config().db.ssl }: PoolOptions = {}): Promise<DatabasePool> {
  // slonik hands its `ssl` to every pg client it opens (@slonik/pg-driver); without one it would read
  // the URL's sslmode, which the configuration does not allow in its URLs.
  const tls = pgSsl(ssl);
  const pool = await createPool(url, {
    ...(tls && { ssl: tls }),
    maxPoolSize,
    poolName: name,
    typeParsers,
    interceptors: [resultParser],
    transactionRetryLimit: 0,
    queryRetryLimit: 0,
    statementTimeout: 30_000,
    // slonik's 5 s was what failed first on a busy machine (CI's two cores under every suite at once: a
    // new connection's SCRAM exchange waits for CPU). A server that is down still refuses at once, and
    // a request waiting for a connection is bounded by its own deadline, not by this.
    connectionTimeout: 15_000,
    resetConnection: () => Promise.resolve(),
  });
  // slonik also emits every query error on the pool. Without a listener Node's EventEmitter throws
  // "Unhandled error" in place of the original (a unique violation would become a bare 500); the
  // caller receives the original error either way, so nothing is lost by ignoring the event here.
  pool.on('error', () => undefined);
  return pool;
}
