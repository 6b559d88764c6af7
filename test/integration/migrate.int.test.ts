import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { config } from '../../common/config';
import { MigrationError, migrate, migrationsDir, readMigrations } from '../../db/migrate';
import { pgSsl } from '../../db/pg-ssl';
import { createScratchDatabase, type ScratchDatabase } from '../helpers/db';

let scratch: ScratchDatabase;
const tempDirs: string[] = [];

beforeAll(async () => {
  scratch = await createScratchDatabase('platform_migrate_test');
});

afterAll(async () => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  await scratch?.drop();
});

/** A copy of the real migrations, plus extra files, to change without touching the repository. */
function migrationsCopy(extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  tempDirs.push(dir);
  cpSync(migrationsDir, dir, { recursive: true });
  for (const [file, text] of Object.entries(extra)) writeFileSync(join(dir, file), text);
  return dir;
}

async function query<T extends object>(text: string): Promise<T[]> {
  const client = new Client({ connectionString: scratch.ownerUrl, ssl: pgSsl(config().db.ssl) });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

const run = async (dir?: string) => {
  const output: string[] = [];
  const result = await migrate({ databaseUrl: scratch.ownerUrl, dir, write: (text) => output.push(text) });
  return { ...result, output: output.join('') };
};

describe('migration runner', () => {
  it('applies every file in order, each recorded with the SHA-256 of its text', async () => {
    const files = readMigrations();
    const { applied, output } = await run();

    expect(applied).toEqual(files.map((file) => file.name));
    for (const file of files) expect(output).toMatch(new RegExp(`applying ${file.name} \\.\\.\\. ok \\(\\d+ ms\\)\\n`));
    const recorded = await query<{ version: string; name: string; checksum: string }>(
      'SELECT version, name, checksum FROM schema_migrations ORDER BY version',
    );
    expect(recorded).toEqual(files.map((file) => ({
      version: file.version,
      name: file.name,
      checksum: createHash('sha256').update(readFileSync(join(migrationsDir, `${file.name}.sql`))).digest('hex'),
    })));
  });

  it('applying twice is a no-op', async () => {
    const before = await query('SELECT * FROM schema_migrations ORDER BY version');
    const { applied, output } = await run();

    expect(applied).toEqual([]);
    expect(output).toMatch(/database is up to date/);
    expect(await query('SELECT * FROM schema_migrations ORDER BY version')).toEqual(before);
  });

  it('fails loudly when an applied file was edited, and applies nothing', async () => {
    const dir = migrationsCopy({ '9000_after_tamper.sql': 'CREATE TABLE after_tamper ();' });
    writeFileSync(join(dir, '0001_foundation.sql'), `${readFileSync(join(dir, '0001_foundation.sql'), 'utf8')}\n-- edited\n`);

    await expect(run(dir)).rejects.toThrow(MigrationError);
    await expect(run(dir)).rejects.toThrow(/0001_foundation changed after it was applied/);
    expect(await query("SELECT to_regclass('after_tamper') AS t")).toEqual([{ t: null }]);
  });

  it('refuses a pending file numbered below one already applied', async () => {
    await run(migrationsCopy({ '9001_later.sql': 'CREATE TABLE later ();' }));
    const dir = migrationsCopy({ '9001_later.sql': 'CREATE TABLE later ();', '5000_earlier.sql': 'CREATE TABLE earlier ();' });

    await expect(run(dir)).rejects.toThrow(/5000_earlier is pending but 9001 is already applied/);
  });

  it('rolls a failing migration back completely and names its line', async () => {
    const broken = 'CREATE TABLE half_done ();\nSELEC 1;\n';
    const dir = migrationsCopy({ '9001_later.sql': 'CREATE TABLE later ();', '9002_broken.sql': broken });

    await expect(run(dir)).rejects.toThrow(/9002_broken failed at line 2: syntax error/);
    expect(await query("SELECT to_regclass('half_done') AS t")).toEqual([{ t: null }]);
    expect(await query("SELECT version FROM schema_migrations WHERE version = '9002'")).toEqual([]);
  });

  it('lets two runners at once apply each migration exactly once', async () => {
    // The slow migration keeps the first runner inside its lock while the second one starts.
    const dir = migrationsCopy({
      '9001_later.sql': 'CREATE TABLE later ();',
      '9003_slow.sql': 'SELECT pg_sleep(0.5); CREATE TABLE slow ();',
    });

    const results = await Promise.all([run(dir), run(dir)]);

    expect(results.flatMap((result) => result.applied)).toEqual(['9003_slow']);
    expect(await query("SELECT count(*)::int AS n FROM schema_migrations WHERE version = '9003'")).toEqual([{ n: 1 }]);
  });
});
