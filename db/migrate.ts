import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, type DatabaseError } from 'pg';
import { config } from '../common/config';
import { repoRoot } from '../common/paths';
import { pgSsl, type DatabaseSsl } from './pg-ssl';

/**
 * The migration runner: plain SQL files `db/migrations/NNNN_<slug>.sql`, applied in order, each in
 * its own transaction, recorded in `schema_migrations` with the SHA-256 of the file.
 *
 * It talks to PostgreSQL with one `pg` client rather than through slonik: a migration is a script of
 * many statements (only the simple query protocol runs those), and the advisory lock that keeps two
 * runners apart is held by the session, so everything must happen on a single connection.
 * The runner's own few statements (lock, bookkeeping table) live here, beside the files they apply.
 *
 * Rules, checked before anything is applied:
 * - a file that changed after it was applied fails the run (migrations are never edited once landed);
 * - an applied migration whose file is gone fails the run;
 * - a pending file numbered below one already applied fails the run (renumber it instead).
 * A statement that cannot run inside a transaction (CREATE INDEX CONCURRENTLY) is not supported.
 */

export const migrationsDir = join(repoRoot, 'db', 'migrations');

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** Any constant works; this one is derived from a readable name so it cannot collide by accident. */
const LOCK = `hashtextextended('platform:migrate', 0)`;

export interface Migration {
  version: string;
  name: string;
  checksum: string;
  sql: string;
}

interface AppliedMigration {
  version: string;
  name: string;
  checksum: string;
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export function checksum(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The migration files of a folder, in order; a stray or duplicate-numbered .sql file is an error. */
export function readMigrations(dir: string = migrationsDir): Migration[] {
  const files = readdirSync(dir).filter((file) => file.endsWith('.sql')).sort();
  const migrations = files.map((file) => {
    const match = FILE_NAME.exec(file);
    if (!match) throw new MigrationError(`${file}: migration files are named NNNN_<slug>.sql (slug in a-z, 0-9, _)`);
    const sql = readFileSync(join(dir, file), 'utf8');
    return { version: match[1], name: file.slice(0, -'.sql'.length), checksum: checksum(sql), sql };
  });
  for (let i = 1; i < migrations.length; i += 1) {
    if (migrations[i].version === migrations[i - 1].version) {
      throw new MigrationError(`${migrations[i - 1].name} and ${migrations[i].name} share the number ${migrations[i].version}`);
    }
  }
  return migrations;
}

/** What must be applied, or why the database and the files disagree. */
function pendingMigrations(files: Migration[], applied: AppliedMigration[]): Migration[] {
  const byVersion = new Map(files.map((file) => [file.version, file]));
  const errors: string[] = [];
  for (const row of applied) {
    const file = byVersion.get(row.version);
    if (!file) errors.push(`${row.name} was applied but its file is missing`);
    else if (file.checksum !== row.checksum) {
      errors.push(`${file.name} changed after it was applied (checksum ${row.checksum.slice(0, 12)}… is now ${file.checksum.slice(0, 12)}…); add a new migration instead of editing it`);
    }
  }
  const appliedVersions = new Set(applied.map((row) => row.version));
  const latest = applied.map((row) => row.version).sort().at(-1);
  const pending = files.filter((file) => !appliedVersions.has(file.version));
  for (const file of pending) {
    if (latest && file.version < latest) errors.push(`${file.name} is pending but ${latest} is already applied; renumber it`);
  }
  if (errors.length > 0) throw new MigrationError(`Migrations do not match the database:\n  ${errors.join('\n  ')}`);
  return pending;
}

export interface MigrateOptions {
  databaseUrl: string;
  dir?: string;
  /** Where progress goes; the command line prints it, tests collect it. */
  write?: (text: string) => void;
  /** TLS to the server (db/pg-ssl.ts); default: the process's settings. */
  ssl?: DatabaseSsl;
}

export async function migrate({
  databaseUrl, dir = migrationsDir, write = (text) => process.stdout.write(text), ssl = config().db.ssl,
}: MigrateOptions): Promise<{ applied: string[] }> {
  const files = readMigrations(dir);
  const client = new Client({ connectionString: databaseUrl, application_name: 'platform-migrate', ssl: pgSsl(ssl) });
  await client.connect();
  try {
    await takeLock(client, write);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version     text PRIMARY KEY,
      name        text NOT NULL,
      checksum    text NOT NULL,
      applied_at  timestamptz NOT NULL DEFAULT now(),
      duration_ms integer NOT NULL
    )`);
    const { rows } = await client.query<AppliedMigration>('SELECT version, name, checksum FROM schema_migrations ORDER BY version');
    const pending = pendingMigrations(files, rows);
    for (const migration of pending) await apply(client, migration, write);
    write(pending.length === 0
      ? `database is up to date (${rows.length} applied)\n`
      : `applied ${pending.length} migration(s); ${rows.length + pending.length} in total\n`);
    return { applied: pending.map((migration) => migration.name) };
  } finally {
    // Closing the session releases the advisory lock as well.
    await client.end();
  }
}

/** A second runner waits here until the first has finished, then finds nothing left to apply. */
async function takeLock(client: Client, write: (text: string) => void): Promise<void> {
  const { rows } = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${LOCK}) AS locked`);
  if (rows[0]?.locked) return;
  write('another migration run holds the lock; waiting ...\n');
  await client.query(`SELECT pg_advisory_lock(${LOCK})`);
}

async function apply(client: Client, migration: Migration, write: (text: string) => void): Promise<void> {
  write(`applying ${migration.name} ... `);
  const started = performance.now();
  try {
    await client.query('BEGIN');
    await client.query(migration.sql);
    const durationMs = Math.round(performance.now() - started);
    await client.query(
      'INSERT INTO schema_migrations (version, name, checksum, duration_ms) VALUES ($1, $2, $3, $4)',
      [migration.version, migration.name, migration.checksum, durationMs],
    );
    await client.query('COMMIT');
    write(`ok (${durationMs} ms)\n`);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    write('failed\n');
    throw new MigrationError(`${migration.name} failed${lineOf(migration.sql, error)}: ${(error as Error).message}`, { cause: error });
  }
}

/** PostgreSQL reports the character position of a syntax error; a line number is easier to find. */
function lineOf(sql: string, error: unknown): string {
  const position = Number((error as Partial<DatabaseError>).position);
  if (!Number.isInteger(position) || position < 1) return '';
  return ` at line ${sql.slice(0, position - 1).split('\n').length}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'database-url': { type: 'string' } } });
  // Migrations run as the owner role: it owns the tables, the application role only gets grants.
  const databaseUrl = values['database-url'] ?? config().db.ownerUrl;
  await migrate({ databaseUrl });
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`migrate: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
