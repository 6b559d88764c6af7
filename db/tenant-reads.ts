import pg from 'pg';
import { parse as parseArray } from 'postgres-array';
import type { CommonQueryMethods, QuerySqlToken } from 'slonik';
import { isUuid } from '../common/ids';
import type { DatabasePool } from './pool';
import { sql, typeParsers, validatedRow } from './pool';
import { tenantSettingsStatement, type TenantOptions } from './tenant';

type Row = Record<string, unknown>;

/**
 * Answers the rows of one statement: a TenantReader's (TenantReader.reading) or an open
 * transaction's (rowsIn), so a query module can serve both with one function.
 */
export type StatementRows = (statement: QuerySqlToken) => Promise<readonly Row[]>;

/** The statements of an open transaction (a withTenant one: the caller's tenant is already set). */
export function rowsIn(tx: CommonQueryMethods): StatementRows {
  return (statement) => tx.any(statement) as Promise<readonly Row[]>;
}

/** One caller's statements, written together with others' on one connection, and which of them answers it. */
interface PipelinedUnit {
  queries: pg.QueryConfig[];
  answer: number;
  statement: QuerySqlToken;
  resolve: (rows: readonly Row[]) => void;
  reject: (error: Error) => void;
}

/**
 * Reads in the tenant's transaction in ONE round trip: BEGIN, the tenant's settings, the statement
 * and COMMIT are written together on a pipelined connection (node-postgres `pipeline`), where a
 * withTenant transaction waits for each of the four answers in turn. On this machine a round trip
 * costs the gateway about 0.1 ms of CPU in socket writes, reads and slonik's bookkeeping, as much as
 * the rest of a read by id (issue 16's by-id target).
 *
 * The statement runs exactly as inside withTenant: row-level security sees app.tenant_id, the
 * settings are transaction-local, and a statement that fails (statement_timeout) aborts the
 * transaction, whose COMMIT then rolls it back, so the connection goes back to the pool clean.
 * Nothing here retries or runs work between the statements: `rows` and `rowsTogether` are for single
 * statements that read, `together` for single statements that are a transaction of their own.
 */
export class TenantReader {
  /** What was asked for in this turn of the event loop, written when it ends. */
  private turn: PipelinedUnit[] | null = null;

  private constructor(private readonly pool: pg.Pool) {}

  /**
   * A pipelined pool beside `db` (the slonik pool of the same URL), whose rows come back in the
   * same shapes: the type parsers of db/pool.ts, looked up by name as slonik does.
   */
  static async open(url: string, db: DatabasePool, maxPoolSize: number): Promise<TenantReader> {
    const parsers = await parsersByOid(db);
    const getTypeParser = (oid: number, format?: 'text' | 'binary'): unknown => parsers.get(oid) ?? pg.types.getTypeParser(oid, format);
    const pool = new pg.Pool({
      connectionString: url, max: maxPoolSize, pipeline: true, application_name: 'tenant-reads',
      types: { getTypeParser: getTypeParser as typeof pg.types.getTypeParser },
      // As the slonik pool's (db/pool.ts): a session's ceiling, and a wait for a new connection's handshake.
      statement_timeout: 30_000, connectionTimeoutMillis: 15_000,
    });
    // An idle connection that breaks is replaced on the next checkout; its error needs a listener.
    pool.on('error', () => undefined);
    return new TenantReader(pool);
  }

  /** Reads of the tenant, each statement in its own transaction with `options`. */
  reading(tenantId: string, options: TenantOptions = {}): StatementRows {
    return (statement) => this.rows(tenantId, statement, options);
  }

  /** The rows of `statement`, each validated by the statement's row schema (sql.type) as slonik would. */
  rows(tenantId: string, statement: QuerySqlToken, options: TenantOptions = {}): Promise<readonly Row[]> {
    if (!isUuid(tenantId)) return Promise.reject(new Error('a tenant read needs the tenant id of a verified token'));
    return new Promise((resolve, reject) => {
      void this.write([{ queries: inTransaction(tenantId, statement, options), answer: 2, statement, resolve, reject }]);
    });
  }

  /**
   * The rows of a statement that enters its tenant by itself and is a transaction of its own (the
   * consumer groups' receipt functions, migration 0034, which take the tenant and set it for their
   * statement only), written with the other statements asked for `together` in this turn of the
   * event loop. Fifty Subscribe streams reading their receipts for one fetched batch of
   * their topic make one write where they made fifty.
   */
  together(statement: QuerySqlToken): Promise<readonly Row[]> {
    return this.inTurn({ queries: [pgQuery(statement)], answer: 0, statement });
  }

  /**
   * What `rows` reads, in the tenant's transaction as there, written with the other statements asked
   * for in this turn: a consumer group asking which of a batch's tenants have a module installed
   * makes one write for all of them.
   */
  rowsTogether(tenantId: string, statement: QuerySqlToken, options: TenantOptions = {}): Promise<readonly Row[]> {
    if (!isUuid(tenantId)) return Promise.reject(new Error('a tenant read needs the tenant id of a verified token'));
    return this.inTurn({ queries: inTransaction(tenantId, statement, options), answer: 2, statement });
  }

  end(): Promise<void> {
    return this.pool.end();
  }

  private inTurn(unit: Omit<PipelinedUnit, 'resolve' | 'reject'>): Promise<readonly Row[]> {
    return new Promise((resolve, reject) => {
      if (this.turn === null) {
        this.turn = [];
        setImmediate(() => {
          const units = this.turn ?? [];
          this.turn = null;
          void this.write(units);
        });
      }
      this.turn.push({ ...unit, resolve, reject });
    });
  }

  /**
   * The units' statements on one pipelined connection, in one write, each with its own Sync: a unit
   * that fails (its transaction, if it has one, is rolled back by its COMMIT) leaves the others alone.
   */
  private async write(units: readonly PipelinedUnit[]): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      for (const { reject } of units) reject(error as Error);
      return;
    }
    const settled = await Promise.allSettled(pipelined(client, units.flatMap((unit) => unit.queries)));
    // An error PostgreSQL answered leaves the session usable (a COMMIT rolled its transaction back);
    // any other (the connection ended) does not, and the pool must not hand it out again.
    const broken = settled.find((answer) => answer.status === 'rejected' && !(answer.reason instanceof pg.DatabaseError));
    client.release(broken ? (broken as PromiseRejectedResult).reason as Error : undefined);
    let first = 0;
    for (const { queries, answer, statement, resolve, reject } of units) {
      const own = settled.slice(first, first + queries.length);
      first += queries.length;
      const failure = own.find((result) => result.status === 'rejected');
      if (failure) {
        reject(failure.reason as Error);
        continue;
      }
      try {
        resolve((own[answer] as PromiseFulfilledResult<pg.QueryResult<Row>>).value.rows.map((row) => validatedRow(statement.parser, statement, row)));
      } catch (error) {
        reject(error as Error);
      }
    }
  }
}

/**
 * The queries written to the connection in one write (corked): in pipeline mode node-postgres sends
 * each at once instead of after the answer to the one before, each with its own Sync.
 */
function pipelined(client: pg.PoolClient, queries: readonly pg.QueryConfig[]): Promise<pg.QueryResult<Row>>[] {
  // A pool's client is a pg.Client (its typings give it only ClientBase's members).
  const { stream } = (client as unknown as pg.Client).connection;
  stream.cork();
  try {
    return queries.map((query) => client.query<Row>(query));
  } finally {
    stream.uncork();
  }
}

/** A statement for node-postgres, named if slonik's token is (a prepared statement). */
function pgQuery(statement: QuerySqlToken): pg.QueryConfig {
  return { text: pgText(statement.sql), values: [...statement.values], ...(statement.name ? { name: statement.name } : {}) };
}

/** The statement in the tenant's transaction: BEGIN, the tenant's settings, the statement (its rows are answer 2), COMMIT. */
function inTransaction(tenantId: string, statement: QuerySqlToken, options: TenantOptions): pg.QueryConfig[] {
  const settings = tenantSettingsStatement(tenantId, options);
  return [{ text: 'BEGIN' }, { text: pgText(settings.sql), values: [...settings.values] }, pgQuery(statement), { text: 'COMMIT' }];
}

/** slonik writes its parameters `$slonik_1`…; PostgreSQL's are `$1`… (slonik's executeQuery does the same). */
function pgText(text: string): string {
  return text.replaceAll('$slonik_', '$');
}


async function parsersByOid(db: DatabasePool): Promise<Map<number, (value: string) => unknown>> {
  const types = await db.any(sql.unsafe`SELECT oid, typarray, typname FROM pg_type WHERE typname = ANY(${sql.array(typeParsers.map((p) => p.name), 'text')})`);
  const parsers = new Map<number, (value: string) => unknown>();
  for (const { oid, typarray, typname } of types as readonly { oid: number; typarray: number; typname: string }[]) {
    const parse = typeParsers.find((p) => p.name === typname)!.parse;
    parsers.set(oid, parse);
    parsers.set(typarray, (value: string) => parseArray(value, parse));
  }
  return parsers;
}
