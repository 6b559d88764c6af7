import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkManifest, type ManifestLimits, type ModuleManifest } from './manifest';

/** A manifest that cannot be used: the gateway does not start, and the message says which file and why. */
export class ManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestError';
  }
}

/**
 * The modules the platform knows: one manifest per folder of `MODULES_DIR` (`modules/<slug>/manifest.json`),
 * read and checked once at start-up. Lookups by slug go through a Map, so a slug from a request path
 * is only ever compared, never used to reach a file.
 */
export class ModuleCatalogue {
  private readonly bySlug: ReadonlyMap<string, ModuleManifest>;

  constructor(manifests: readonly ModuleManifest[]) {
    this.bySlug = new Map(manifests.map((manifest) => [manifest.slug, manifest]));
  }

  get(slug: string): ModuleManifest | undefined {
    return this.bySlug.get(slug);
  }

  /** Every known module, by slug. */
  list(): ModuleManifest[] {
    return [...this.bySlug.values()].sort((a, b) => a.slug.localeCompare(b.slug));
  }
}

function readManifest(dir: string, folder: string, limits: ManifestLimits): ModuleManifest {
  const file = join(dir, folder, 'manifest.json');
  if (!existsSync(file)) throw new ManifestError(`module ${folder}: ${file} is missing`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ManifestError(`module manifest ${file} is not JSON: ${(error as Error).message}`);
  }
  const checked = checkManifest(parsed, folder, limits);
  if (!checked.ok) throw new ManifestError(`module manifest ${file} is invalid: ${checked.problems.join('; ')}`);
  return checked.manifest;
}

/** Reads every manifest under `dir`; the first broken one throws a ManifestError naming the file and each mistake. */
export function loadModuleCatalogue(dir: string, limits: ManifestLimits): ModuleCatalogue {
  if (!existsSync(dir)) throw new ManifestError(`the modules folder ${dir} (MODULES_DIR) does not exist`);
  const folders = readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  return new ModuleCatalogue(folders.map((folder) => readManifest(dir, folder, limits)));
}
