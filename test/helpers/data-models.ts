import { join } from 'node:path';
import { DataCatalogue } from '../../services/data/catalogue';
import { loadModuleCatalogue, ModuleCatalogue } from '../../services/modules/catalogue';
import type { ModuleManifest } from '../../services/modules/manifest';
import type { DataModel } from '../../db/queries/data/model';

/**
 * Data-layer models for the query-language tests: the shipped `crm` module, and `lab`, a module of
 * every field type (built here, not shipped) with a relation to a model the API does not serve.
 */
const text = (nullable = true) => ({ type: 'text' as const, nullable });

const lab: ModuleManifest = {
  slug: 'lab', name: 'Lab', version: '1.0.0', description: 'test fixture', permissions: [], hooks: [],
  events: { publishes: [], subscribes: [] },
  models: {
    owners: { autoApi: true, fields: { name: text(false) } },
    things: {
      autoApi: true,
      fields: {
        label: text(false), note: text(), count: { type: 'integer', nullable: true }, big: { type: 'bigint', nullable: true },
        price: { type: 'numeric', nullable: true }, active: { type: 'boolean', nullable: true }, ref: { type: 'uuid', nullable: true },
        seenAt: { type: 'timestamptz', nullable: true }, day: { type: 'date', nullable: true }, doc: { type: 'jsonb', nullable: true },
        attachment: { type: 'file', nullable: true }, rank: { type: 'integer', nullable: false },
        ownerId: { type: 'uuid', nullable: true, references: { model: 'owners', field: 'id' } },
      },
    },
    parts: { autoApi: true, fields: { name: text(), thingId: { type: 'uuid', nullable: true, references: { model: 'things', field: 'id' } } } },
    secrets: { autoApi: false, fields: { thingId: { type: 'uuid', nullable: true, references: { model: 'things', field: 'id' } } } },
  },
};

export const crm = loadModuleCatalogue(join(__dirname, '../../modules'), { maxModels: 50 }).get('crm')!;

export const dataCatalogue = new DataCatalogue(new ModuleCatalogue([crm, lab]));

export function dataModel(module: string, name: string): DataModel {
  const model = dataCatalogue.model(module, name);
  if (!model) throw new Error(`no model ${module}.${name}`);
  return model;
}
