import Joi from 'joi';
import type { DataField, DataModel } from '../../../services/data/catalogue';

/**
 * The model description (docs/reference/data.md#resources): a model's name and its fields, each with
 * its name, type and nullability, `primaryKey: true` on `id`, and `foreignKey: "<table>.<column>"` on a
 * reference (`companies.id`). System fields first, then the manifest's, in its order.
 */

export interface ModuleParams { module: string }

/** Any text: a module the tenant has not installed is 404 module-not-found, however it is spelled. */
export const moduleParams = Joi.object<ModuleParams>({ module: Joi.string().max(100).required() });

const fieldDescription = Joi.object({
  name: Joi.string().required(),
  type: Joi.string().required(),
  nullable: Joi.boolean().required(),
  primaryKey: Joi.boolean(),
  foreignKey: Joi.string(),
});

const modelDescription = Joi.object({ name: Joi.string().required(), fields: Joi.array().items(fieldDescription).required() });

export const modelList = Joi.object({ data: Joi.array().items(modelDescription).required() });

function describeField(field: DataField) {
  return {
    name: field.name,
    type: field.type,
    nullable: field.nullable,
    ...(field.name === 'id' && field.system ? { primaryKey: true } : {}),
    ...(field.references ? { foreignKey: `${field.references}.id` } : {}),
  };
}

export function describeModel(model: DataModel) {
  return { name: model.name, fields: model.fields.map(describeField) };
}
