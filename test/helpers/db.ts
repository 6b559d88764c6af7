import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { config } from '../../common/config';
import { migrate } from '../../db/migrate';
import { pgSsl } from '../../db/pg-ssl';
import { createDbPool, type DatabasePool } from '../../db/pool';

/**
 * Databases for integration tests. Tests that only read and write tenant rows use the shared
 * `platform` database (migrated once per test file; the runner's lock keeps parallel files apart)
 * and use fresh tenant ids. Tests that need a database of their own (the migration runner, the
 * relay, whose leader lock is one per database) get a scratch database.
 */

export const ownerUrl = (): string => config().db.ownerUrl;
export const appUrl = (): string => config().db.url;

/** The same server and credentials, another database. */
export function onDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

let sharedMigration: Promise<unknown> | undefined;

/** Brings the shared database to the current schema, once per test file. */
export function migrateSharedDatabase(): Promise<unknown> {
  sharedMigration ??= migrate({ databaseUrl: ownerUrl(), write: () => undefined });
  return sharedMigration;
}

export interface ScratchDatabase {
  name: string;
  ownerUrl: string;
  appUrl: string;
  drop(): Promise<void>;
}

async function asOwner<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: ownerUrl(), ssl: pgSsl(config().db.ssl) });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * An empty database `<prefix>_<random>`, created by platform_owner (infra/postgres/init.sql gives it
 * CREATEDB for this). Drop it in afterAll after closing every pool on it.
 */
export async function createScratchDatabase(prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  // template0, like infra/postgres/init.sql: it is never "being accessed by other users".
  await asOwner((client) => client.query(`CREATE DATABASE ${name} ENCODING 'UTF8' LOCALE 'C.UTF-8' TEMPLATE template0`));
  return {
    name,
    ownerUrl: onDatabase(ownerUrl(), name),
    appUrl: onDatabase(appUrl(), name),
    // FORCE also ends sessions of relay processes a test killed and PostgreSQL has not reaped yet.
    // PostgreSQL 15 refuses FORCE to a non-superuser while an autovacuum worker (no role) is in the
    // new database (42501); a plain DROP waits for autovacuum to leave, so that is the second try.
    drop: () => asOwner(async (client) => {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(async (error: { code?: string }) => {
        if (error.code !== '42501') throw error;
        await client.query(`DROP DATABASE IF EXISTS ${name}`);
      });
    }),
  };
}

export interface MigratedDatabase extends ScratchDatabase {
  /** The owner role: what fleet-wide work (sweeps, consumers, relays) connects as. */
  owner: DatabasePool;
  /** platform_app: what the gateway connects as, under row-level security. */
  app: DatabasePool;
  /** Ends both pools, then drops the database: call it in afterAll. */
  close(): Promise<void>;
}

/**
 * A scratch database at the current schema with a pool for each role. For tests whose work spans
 * every tenant of its database (the maintenance sweep, the usage snapshot, consumers, the relay):
 * on the shared database they would touch other files' rows, and other files' sweeps would take
 * theirs, so their counts could not be exact.
 */
export async function createMigratedDatabase(prefix: string, { ownerPoolSize = 2, appPoolSize = 2 } = {}): Promise<MigratedDatabase> {
  const scratch = await createScratchDatabase(prefix);
  await migrate({ databaseUrl: scratch.ownerUrl, write: () => undefined });
  const owner = await createDbPool(scratch.ownerUrl, { maxPoolSize: ownerPoolSize, name: `${prefix}-owner` });
  const app = await createDbPool(scratch.appUrl, { maxPoolSize: appPoolSize, name: `${prefix}-app` });
  return {
    ...scratch,
    owner,
    app,
    close: async () => {
      await Promise.all([owner.end(), app.end()]);
      await scratch.drop();
    },
  };
}
