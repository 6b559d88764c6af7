import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import type { DataField, DataModel } from '../../db/queries/data/model';
import {
  addColumn, addForeignKey, createModelTable, createModuleSchema, dropNotNull, lockProvisioning, selectAppliedModels,
  upsertAppliedModel, type AppliedField, type AppliedModel,
} from '../../db/queries/data/provision.queries';
import type { FieldDefinition, ModuleManifest } from '../modules/manifest';
import { tableModelsOf } from './catalogue';

/**
 * The data layer's tables (issue 16, docs/decisions/data.md): every model of every shipped manifest
 * (autoApi or not) is a table `mod_<slug>.<model>`, created at the platform's bring-up by the owner
 * role (workers/data-provision.ts). The registry (data_models) keeps what was applied, so a new
 * manifest version is compared with it: added models and fields migrate, a relaxed NOT NULL is
 * dropped, and a destructive change (a dropped model or field, a retyped field, a new NOT NULL on an
 * existing column, a changed reference, a required field added to an existing table) is refused
 * with every reason named, before any statement runs. One transaction under an advisory lock, so a
 * refusal applies nothing and two processes never race.
 */

/** A manifest change that would lose data or break existing records; nothing was applied. */
export class ModelChangeRefused extends Error {
  override name = 'ModelChangeRefused';

  constructor(readonly reasons: readonly string[]) {
    super(`destructive model change refused, nothing applied:\n  ${reasons.join('\n  ')}`);
  }
}

/** What one run did to one module's tables. */
export interface ModuleProvision {
  module: string;
  version: string;
  createdModels: string[];
  /** `model.field` */
  addedFields: string[];
  /** `model.field` whose NOT NULL was dropped. */
  relaxedFields: string[];
}

interface ModelChanges {
  /** The model as it is now. */
  model: DataModel;
  /** Its whole table is new. */
  created: boolean;
  added: DataField[];
  relaxed: DataField[];
}

interface ModulePlan {
  manifest: ModuleManifest;
  changes: ModelChanges[];
  refusals: string[];
}

const appliedOf = (definition: FieldDefinition): AppliedField => ({
  type: definition.type, nullable: definition.nullable, ...(definition.references ? { references: definition.references } : {}),
});

const referenceText = (field: AppliedField) => (field.references ? `${field.references.model}.${field.references.field}` : 'none');

type FieldVerdict = { change: 'add' | 'relax' | 'same' } | { refused: string };

/** One field of an existing model against what was applied: the change to make, or why it is refused. */
function compareField(where: string, applied: AppliedField | undefined, now: AppliedField): FieldVerdict {
  if (!applied) {
    return now.nullable ? { change: 'add' } : { refused: `${where}: added as required to an existing table whose records have no value; declare it nullable` };
  }
  if (applied.type !== now.type) return { refused: `${where}: retyped from ${applied.type} to ${now.type}` };
  if (referenceText(applied) !== referenceText(now)) return { refused: `${where}: its reference changed from ${referenceText(applied)} to ${referenceText(now)}` };
  if (applied.nullable && !now.nullable) return { refused: `${where}: changed to NOT NULL, existing records may hold null` };
  return { change: applied.nullable === now.nullable ? 'same' : 'relax' };
}

/** The module's manifest against the registry: what to apply, or every reason to refuse. Pure. */
export function planModule(manifest: ModuleManifest, applied: ReadonlyMap<string, AppliedModel>): ModulePlan {
  const refusals: string[] = [];
  for (const [model, { fields }] of applied) {
    const declared = manifest.models[model];
    if (!declared) {
      refusals.push(`module ${manifest.slug}, model ${model}: dropped (its table and records stay; restore the model in the manifest)`);
      continue;
    }
    for (const field of Object.keys(fields)) {
      if (!declared.fields[field]) refusals.push(`module ${manifest.slug}, model ${model}, field ${field}: dropped (its column and values stay)`);
    }
  }
  const changes: ModelChanges[] = [];
  for (const model of tableModelsOf(manifest)) {
    const before = applied.get(model.name);
    const own = model.fields.filter((field) => !field.system);
    if (!before) {
      changes.push({ model, created: true, added: own, relaxed: [] });
      continue;
    }
    const change: ModelChanges = { model, created: false, added: [], relaxed: [] };
    for (const field of own) {
      const where = `module ${manifest.slug}, model ${model.name}, field ${field.name}`;
      const verdict = compareField(where, before.fields[field.name], appliedOf(manifest.models[model.name].fields[field.name]));
      if ('refused' in verdict) refusals.push(verdict.refused);
      else if (verdict.change === 'add') change.added.push(field);
      else if (verdict.change === 'relax') change.relaxed.push(field);
    }
    if (change.added.length > 0 || change.relaxed.length > 0) changes.push(change);
  }
  return { manifest, changes, refusals };
}

async function apply(tx: DatabaseTransactionConnection, { manifest, changes }: ModulePlan): Promise<ModuleProvision> {
  const outcome: ModuleProvision = { module: manifest.slug, version: manifest.version, createdModels: [], addedFields: [], relaxedFields: [] };
  if (changes.length === 0) return outcome;
  await createModuleSchema(tx, changes[0].model.schema);
  for (const { model, created, added, relaxed } of changes) {
    if (created) {
      await createModelTable(tx, model);
      outcome.createdModels.push(model.name);
    } else {
      for (const field of added) await addColumn(tx, model, field);
      for (const field of relaxed) await dropNotNull(tx, model, field);
      outcome.addedFields.push(...added.map((field) => `${model.name}.${field.name}`));
      outcome.relaxedFields.push(...relaxed.map((field) => `${model.name}.${field.name}`));
    }
  }
  // After every table of the run exists: a reference may name a model created later in the manifest, or its own.
  for (const { model, added } of changes) {
    for (const field of added) if (field.references) await addForeignKey(tx, model, field, field.references);
  }
  for (const { model } of changes) {
    const fields = Object.fromEntries(Object.entries(manifest.models[model.name].fields).map(([name, definition]) => [name, appliedOf(definition)]));
    await upsertAppliedModel(tx, manifest.slug, { model: model.name, fields, version: manifest.version });
  }
  return outcome;
}

/**
 * Brings every module's tables to its manifest, on a pool of the owner role. Throws
 * ModelChangeRefused (every reason, of every module) and applies nothing when a change is destructive.
 */
export function provisionModules(ownerDb: DatabasePool, manifests: readonly ModuleManifest[]): Promise<ModuleProvision[]> {
  return ownerDb.transaction(async (tx) => {
    await lockProvisioning(tx);
    const plans: ModulePlan[] = [];
    for (const manifest of manifests) plans.push(planModule(manifest, await selectAppliedModels(tx, manifest.slug)));
    const refusals = plans.flatMap((plan) => plan.refusals);
    if (refusals.length > 0) throw new ModelChangeRefused(refusals);
    const outcomes: ModuleProvision[] = [];
    for (const plan of plans) outcomes.push(await apply(tx, plan));
    return outcomes;
  });
}
