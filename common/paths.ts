import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The repository root, found from this file whether it runs from source (jest) or from dist/. */
function findRoot(start: string): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${start}`);
    dir = parent;
  }
  return dir;
}

export const repoRoot = findRoot(__dirname);
