import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * A secret generated once into the local data folder (the JWT signing key, the Temporal payload key):
 * read when it exists; otherwise `initial()` is written aside and hard-linked into place, so
 * processes starting together agree on one file (the loser of the race reads the winner's) and no
 * reader ever sees a half-written one. Readable by the owner only.
 */
export async function readOrCreateKeyFile(path: string, initial: () => string | Promise<string>): Promise<string> {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const aside = `${path}.${process.pid}.tmp`;
  writeFileSync(aside, await initial(), { mode: 0o600 });
  try {
    linkSync(aside, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(aside);
  }
  return readFileSync(path, 'utf8');
}
