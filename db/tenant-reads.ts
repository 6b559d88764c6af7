import pg from 'pg';
import { parse as parseArray } from 'postgres-array';
import type { CommonQueryMethods, QuerySqlToken } from 'slonik';
import { config } from '../common/config';
import { isUuid } from '../common/ids';
import { pgSsl, type DatabaseSsl } from './pg-ssl';
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

/** One caller's statement, written together with others' on one connection. */
interface PipelinedUnit {
  send: (client: pg.PoolClient) => Promise<readonly Row[]>;
  statement: QuerySqlToken;
  resolve: (rows: readonly Row[]) => void;
  reject: (error: Error) => void;
}

/**
 * Reads in the tenant's transaction in ONE round trip: the tenant's settings and the statement are
 * written together on a pipelined connection (node-postgres `pipeline`) and answered together
 * (inTenantTransaction), where a withTenant transaction waits for each of its four answers in turn.
 * On this machine a round trip costs the gateway about 0.1 ms of CPU in socket writes, reads and
 * slonik's bookkeeping, as much as the rest of a read by id (issue 16's by-id target).
 *
 * The statement runs exactly as inside withTenant: row-level security sees app.tenant_id, the
 * settings are transaction-local, and a statement that fails (statement_timeout) aborts the
 * transaction, which is rolled back, so the connection goes back to the pool clean.
 * Nothing here retries or runs work between the statements: `rows` is for single
 * statements that read, `together` for single statements that are a transaction of their own.
 */
export class TenantReader {
  /** What was asked for in this turn of the event loop, written when it ends. */
  private turn: PipelinedUnit[] | null = null;

  private constructor(private readonly pool: pg.Pool) {}

  /**
   * A pipelined pool beside `db` (the slonik pool of the same URL), whose rows come back in the
   * same shapes: the type parsers of db/pool.ts, looked up by name as slonik does; and the same TLS
   * (db/pg-ssl.ts; default: the process's settings).
   */
  static async open(url: string, db: DatabasePool, maxPoolSize: number, ssl: DatabaseSsl = config().db.ssl): Promise<TenantReader> {
    const parsers = await parsersByOid(db);
    const getTypeParser = (oid: number, format?: 'text' | 'binary'): unknown => parsers.get(oid) ?? pg.types.getTypeParser(oid, format);
    const pool = new pg.Pool({
      connectionString: url, max: maxPoolSize, pipeline: true, application_name: 'tenant-reads', ssl: pgSsl(ssl),
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

  /**
   * The rows of `statement`, each validated by the statement's row schema (sql.type) as slonik would,
   * written with the other reads and statements asked for in this turn of the event loop: the
   * gateway's concurrent requests (a connection's answers are parsed in one turn, and their handlers
   * ask for their reads in it) and a consumer group's tenants of one batch make one write on one
   * connection where they made one each. A socket write costs 50–90 µs of CPU in this VM; at 8 clients
   * a read by id went from 53 to 65 % of the authenticated hello route (bench:data). Each read keeps
   * its own Sync, so its transaction, settings and failure stay its own.
   */
  rows(tenantId: string, statement: QuerySqlToken, options: TenantOptions = {}): Promise<readonly Row[]> {
    if (!isUuid(tenantId)) return Promise.reject(new Error('a tenant read needs the tenant id of a verified token'));
    return this.inTurn({ send: inTenantTransaction(tenantId, statement, options), statement });
  }

  /**
   * The rows of a statement that enters its tenant by itself and is a transaction of its own (the
   * consumer groups' receipt functions, migration 0034, which take the tenant and set it for their
   * statement only), written with the other statements asked for in this turn, as `rows` are: fifty
   * Subscribe streams reading their receipts for one fetched batch of their topic make one write
   * where they made fifty.
   */
  together(statement: QuerySqlToken): Promise<readonly Row[]> {
    return this.inTurn({ send: async (client) => (await client.query<Row>(pgQuery(statement))).rows, statement });
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
   * that fails (its transaction, if it has one, is rolled back) leaves the others alone.
   */
  private async write(units: readonly PipelinedUnit[]): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      for (const { reject } of units) reject(error as Error);
      return;
    }
    const settled = await Promise.allSettled(pipelined(client, units));
    // An error PostgreSQL answered leaves the session usable (its transaction was rolled back);
    // any other (the connection ended) does not, and the pool must not hand it out again.
    const broken = settled.find((answer) => answer.status === 'rejected' && !(answer.reason instanceof pg.DatabaseError));
    client.release(broken ? (broken as PromiseRejectedResult).reason as Error : undefined);
    units.forEach(({ statement, resolve, reject }, index) => {
      const answer = settled[index];
      if (answer.status === 'rejected') {
        reject(answer.reason as Error);
        return;
      }
      try {
        resolve(answer.value.map((row) => validatedRow(statement.parser, statement, row)));
      } catch (error) {
        reject(error as Error);
      }
    });
  }
}

/**
 * The units' statements written to the connection in one write (corked): in pipeline mode
 * node-postgres sends each at once instead of after the answer to the one before.
 */
function pipelined(client: pg.PoolClient, units: readonly PipelinedUnit[]): Promise<readonly Row[]>[] {
  // A pool's client is a pg.Client (its typings give it only ClientBase's members).
  const { stream } = (client as unknown as pg.Client).connection;
  stream.cork();
  try {
    return units.map((unit) => unit.send(client));
  } finally {
    stream.uncork();
  }
}

/** A statement for node-postgres, named if slonik's token is (a prepared statement). */
function pgQuery(statement: QuerySqlToken): pg.QueryConfig {
  return { text: pgText(statement.sql), values: [...statement.values], ...(statement.name ? { name: statement.name } : {}) };
}

/**
 * The statement in the tenant's transaction as ONE extended-protocol exchange: the tenant's settings
 * (set_config(…, true)) parsed, bound and executed, then the statement, then a single Sync. PostgreSQL
 * runs what comes before a Sync as one implicit transaction, commits it at the Sync and ends its
 * transaction-local settings there (the protocol's "Pipelining"): withTenant's BEGIN…COMMIT without
 * the BEGIN and COMMIT. Each Sync is a ReadyForQuery, at which PostgreSQL flushes its output, so a
 * Sync per statement made four sends and four wake-ups of the reader for one read. A statement that
 * fails aborts the transaction and PostgreSQL skips to the Sync, which rolls it back. The statement's
 * rows are the second result (node-postgres answers a query of several statements with one result each).
 */
function inTenantTransaction(tenantId: string, statement: QuerySqlToken, options: TenantOptions): (client: pg.PoolClient) => Promise<readonly Row[]> {
  const settings = tenantSettingsStatement(tenantId, options);
  const values = settings.values as string[];
  return (client) => {
    const name = preparedSettings.on(client, pgText(settings.sql), values);
    return new Promise((resolve, reject) => {
      // 'extended' even for a statement without parameters, so the exchange ends at the Sync (a simple
      // Query would end the transaction itself).
      const query = new pg.Query({ ...pgQuery(statement), queryMode: 'extended' } as pg.QueryConfig, (error: Error | undefined, results: unknown) => {
        if (error) reject(error);
        else resolve((results as pg.QueryResult<Row>[])[1].rows);
      });
      const submitStatement = query.submit.bind(query);
      query.submit = (connection) => {
        connection.bind({ statement: name, values }, true);
        connection.describe({ type: 'P' }, true);
        connection.execute({}, true);
        return submitStatement(connection);
      };
      void client.query(query);
    });
  };
}

/**
 * The settings statements as prepared statements, parsed once per connection: there are a few
 * (one per combination of TenantOptions), and parsing one per read was a third of PostgreSQL's CPU
 * for a read (bench/data-tenant-reads.bench.ts). A connection's first read of a combination prepares it
 * in an exchange of its own written just before (node-postgres's named query; set_config(…, true)
 * ends with that exchange's own transaction), because node-postgres takes the first ParseComplete a
 * query is answered as its statement's: a Parse of the settings inside the read's exchange would have
 * marked a statement that then failed to parse (its table not there yet) as prepared on the
 * connection for good. A statement prepared through the protocol outlives the transaction it was
 * parsed in, even one that fails; a connection that breaks is never used again, and a new one
 * starts with none.
 */
const preparedSettings = {
  names: new Map<string, string>(),
  prepared: new WeakMap<pg.PoolClient, Set<string>>(),

  /** The statement's name on `client`, prepared there first if it has not been. */
  on(client: pg.PoolClient, text: string, values: string[]): string {
    let name = this.names.get(text);
    if (name === undefined) {
      name = `tenant-settings-${this.names.size + 1}`;
      this.names.set(text, name);
    }
    let prepared = this.prepared.get(client);
    if (!prepared) this.prepared.set(client, prepared = new Set());
    if (!prepared.has(name)) {
      const preparing = name;
      prepared.add(preparing);
      // A failure here fails the read written behind it too, which reports it; the next read prepares again.
      client.query({ name: preparing, text, values }).catch(() => prepared.delete(preparing));
    }
    return name;
  },
};

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
