import type { DataCatalogue } from '../../../services/data/catalogue';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { describeModel, moduleParams, modelList, type ModuleParams } from './models.schemas';

/**
 * `GET /data/{module}/models` (docs/reference/data.md#resources) describes the module's autoApi models. Any
 * member of a tenant that has the module installed may read it, with no permission of its own
 * (docs/decisions/data.md, Model description): it is the same for every tenant and no more than
 * the public OpenAPI document of the namespace shows. Listed before the record routes, whose
 * `/data/:module/:model` would otherwise take `models` for a model (no manifest may name one so).
 */
export function dataModelRoutes(deps: { catalogue: DataCatalogue }): AnyRoute[] {
  return [
    defineRoute<ModuleParams>({
      namespace: 'data', method: 'GET', path: '/data/:module/models', operationId: 'data.models.list',
      summary: 'The models of a module: fields, types, nullability, keys',
      description: 'The autoApi models of the module\'s manifest. A module the tenant has not installed (or deactivated) is 404 module-not-found.',
      auth: 'bearer', module: (params) => params.module,
      schemas: { params: moduleParams, response: { 200: modelList } },
      documentedAs: () => deps.catalogue.modules().map((module) => ({
        path: `/data/${module}/models`, operationId: `data.${module}.models.list`,
        summary: `The models of ${module}: fields, types, nullability, keys`, schemas: { response: { 200: modelList } },
      })),
      handler(ctx) {
        ctx.body = { data: deps.catalogue.models(ctx.guard.params.module).map(describeModel) };
      },
    }),
  ];
}
