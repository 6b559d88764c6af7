import { config } from '../common/config';
import { createDbPool } from '../db/pool';
import { loadModuleCatalogue } from '../services/modules/catalogue';
import { provisionModules, type ModuleProvision } from '../services/data/provision';

/**
 * Creates and migrates the data layer's tables of every shipped module manifest (issue 16,
 * docs/decisions/data.md), run by the bring-up right after the migrations. DDL needs the owner
 * role, which the gateway does not hold, so this is its own short-lived process. Running it again
 * changes nothing; a destructive manifest change exits non-zero with every reason, nothing applied.
 */

function summarize({ module, version, createdModels, addedFields, relaxedFields }: ModuleProvision): string[] {
  const lines = [
    ...createdModels.map((model) => `created   ${module}.${model} (${version})`),
    ...addedFields.map((field) => `added     ${module}.${field} (${version})`),
    ...relaxedFields.map((field) => `nullable  ${module}.${field} (${version})`),
  ];
  return lines.length > 0 ? lines : [`unchanged ${module} (${version})`];
}

async function main(): Promise<void> {
  const settings = config();
  // A broken manifest stops here with its file and mistakes, as it would stop the gateway.
  const catalogue = loadModuleCatalogue(settings.modules.dir, { maxModels: settings.data.maxTablesPerModule });
  const db = await createDbPool(settings.db.ownerUrl, { maxPoolSize: 1, name: 'data-provision' });
  try {
    const outcomes = await provisionModules(db, catalogue.list());
    for (const line of outcomes.flatMap(summarize)) process.stdout.write(`data: ${line}\n`);
  } finally {
    await db.end();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`data-provision: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
