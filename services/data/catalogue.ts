import { SYSTEM_FIELDS, moduleSchema, type DataField, type DataModel, type DataRelation } from '../../db/queries/data/model';
import type { ModuleCatalogue } from '../modules/catalogue';
import type { ModuleManifest } from '../modules/manifest';

export type { DataField, DataFieldType, DataModel } from '../../db/queries/data/model';

/**
 * The models the automatic data API serves (issue 16): every model a shipped manifest flags
 * `autoApi`, with its system fields and the relations `select=` may embed. Built once from the
 * module catalogue at start-up; a request only looks models up.
 */
export class DataCatalogue {
  private readonly byModule: ReadonlyMap<string, ReadonlyMap<string, DataModel>>;

  constructor(modules: ModuleCatalogue) {
    this.byModule = new Map(modules.list().map((manifest) => [manifest.slug, modelsOf(manifest)]));
  }

  /** The model, or undefined when the module has no such autoApi model (404 not-found). */
  model(module: string, name: string): DataModel | undefined {
    return this.byModule.get(module)?.get(name);
  }

  /** The modules with an autoApi model, in catalogue order (the data namespace's OpenAPI document). */
  modules(): string[] {
    return [...this.byModule].filter(([, models]) => models.size > 0).map(([module]) => module);
  }

  /** The module's autoApi models, in manifest order (GET /data/{module}/models). */
  models(module: string): DataModel[] {
    return [...(this.byModule.get(module)?.values() ?? [])];
  }

  /**
   * A relation of the model by the name `select=` embeds it with and a create nests it under: the
   * target model's (docs/reference/data.md#rule-17), which the API must serve. Two references between the same models
   * leave the name ambiguous. The caller names the request part in its problem (`select`, `contacts`).
   */
  relationOf(model: DataModel, name: string): RelationOf {
    const relations = model.relations.filter((relation) => relation.name === name);
    const target = this.model(model.module, name);
    if (relations.length === 0 || !target) {
      return { code: 'UNKNOWN_RELATION', message: `${name} is not a relation of ${model.module}.${model.name}` };
    }
    if (relations.length > 1) {
      return { code: 'AMBIGUOUS_RELATION', message: `${model.name} and ${name} are related through more than one field` };
    }
    return { relation: relations[0], target };
  }
}

/** A relation and the model it reaches, or why the name is none (an errors[] entry's code and message). */
export type RelationOf = { relation: DataRelation; target: DataModel } | { code: 'UNKNOWN_RELATION' | 'AMBIGUOUS_RELATION'; message: string };

/** Every model of the manifest, autoApi or not: tables exist for all of them; the API serves the flagged ones. */
export function tableModelsOf(manifest: ModuleManifest): DataModel[] {
  const entries = Object.entries(manifest.models);
  return entries.map(([name, definition]) => {
    const fields: DataField[] = [
      ...SYSTEM_FIELDS,
      ...Object.entries(definition.fields).map(([field, spec]) => ({
        name: field, column: field, type: spec.type, nullable: spec.nullable, system: false,
        ...(spec.references ? { references: spec.references.model } : {}),
      })),
    ];
    const manyToOne: DataRelation[] = fields.filter((field) => field.references !== undefined)
      .map((field) => ({ name: field.references!, cardinality: 'one', localColumn: field.column, remoteColumn: 'id' }));
    const oneToMany: DataRelation[] = entries.flatMap(([other, otherDefinition]) => Object.entries(otherDefinition.fields)
      .filter(([, spec]) => spec.references?.model === name)
      .map(([field]) => ({ name: other, cardinality: 'many' as const, localColumn: 'id', remoteColumn: field })));
    return { module: manifest.slug, name, schema: moduleSchema(manifest.slug), table: name, fields, relations: [...manyToOne, ...oneToMany] };
  });
}

function modelsOf(manifest: ModuleManifest): ReadonlyMap<string, DataModel> {
  const served = new Set(Object.entries(manifest.models).filter(([, definition]) => definition.autoApi).map(([name]) => name));
  return new Map(tableModelsOf(manifest).filter((model) => served.has(model.name)).map((model) => [model.name, model]));
}
