import { authOf } from '../../context';
import type { RawQuery } from '../../../services/data/query/parse';
import {
  createRecord, deleteRecord, listRecords, readRecord, updateRecord, type DataDeps,
} from '../../../services/data/records';
import { defineRoute, type AnyRoute, type RouteContext } from '../../http/route-registry';
import {
  FILTER_GRAMMAR, listQuery, modelPathParams, record, recordBody, recordList, recordPathParams, recordQuery,
  type ModelParams, type RecordParams,
} from './records.schemas';

type Body = Record<string, unknown>;

/** The module is the path's: 404 module-not-found unless the tenant has it installed and active. */
const moduleOfPath = (params: Record<string, string>) => params.module;

/** The query string as sent: the query language's parser checks every key and value itself. */
const rawQuery = (ctx: RouteContext) => ctx.query as RawQuery;

const PERMISSIONS = 'Permission `{module}.{model}.{action}` (read, create, update, delete; `write` holds create and update; `{module}.*`), checked per request: 403 forbidden.';

/**
 * Document 2, Data layer: five endpoints for every model a module flags `autoApi`, served under
 * `/data/{module}/{model}`. The module and model are path parameters, so the permission is checked
 * by the service for the model named, not declared on the route.
 */
export function dataRecordRoutes(deps: DataDeps): AnyRoute[] {
  return [
    defineRoute<ModelParams>({
      namespace: 'data', method: 'GET', path: '/data/:module/:model', operationId: 'data.records.list',
      summary: 'Records of a model: filters, order, select with relations, keyset pages',
      description: `${FILTER_GRAMMAR} Soft-deleted records are left out unless \`deleted_at=is.notnull\`. ${PERMISSIONS}`,
      auth: 'bearer', module: moduleOfPath,
      schemas: { params: modelPathParams, query: listQuery, response: { 200: recordList } },
      async handler(ctx) {
        const { module, model } = ctx.guard.params;
        ctx.body = await listRecords(deps, authOf(ctx), { module, model }, rawQuery(ctx));
      },
    }),
    defineRoute<ModelParams, Record<string, never>, Body>({
      namespace: 'data', method: 'POST', path: '/data/:module/:model', operationId: 'data.records.create',
      summary: 'Create a record',
      description: `The model's fields; id, tenantId and the timestamps are the platform's and refused in a body. ${PERMISSIONS}`,
      auth: 'bearer', module: moduleOfPath,
      schemas: { params: modelPathParams, body: recordBody, response: { 201: record } },
      async handler(ctx) {
        const { module, model } = ctx.guard.params;
        ctx.body = await createRecord(deps, authOf(ctx), { module, model }, ctx.guard.body);
        ctx.status = 201;
      },
    }),
    defineRoute<RecordParams>({
      namespace: 'data', method: 'GET', path: '/data/:module/:model/:id', operationId: 'data.records.get',
      summary: 'One record, with relations through select',
      description: `A soft-deleted record, or another tenant's, is 404. ${PERMISSIONS}`,
      auth: 'bearer', module: moduleOfPath,
      schemas: { params: recordPathParams, query: recordQuery, response: { 200: record } },
      async handler(ctx) {
        const { module, model, id } = ctx.guard.params;
        ctx.body = await readRecord(deps, authOf(ctx), { module, model }, id, rawQuery(ctx));
      },
    }),
    defineRoute<RecordParams, Record<string, never>, Body>({
      namespace: 'data', method: 'PATCH', path: '/data/:module/:model/:id', operationId: 'data.records.update',
      summary: 'Change the fields given of a record',
      description: `Only the fields sent change. ${PERMISSIONS}`,
      auth: 'bearer', module: moduleOfPath,
      schemas: { params: recordPathParams, body: recordBody, response: { 200: record } },
      async handler(ctx) {
        const { module, model, id } = ctx.guard.params;
        ctx.body = await updateRecord(deps, authOf(ctx), { module, model }, id, ctx.guard.body);
      },
    }),
    defineRoute<RecordParams>({
      namespace: 'data', method: 'DELETE', path: '/data/:module/:model/:id', operationId: 'data.records.delete',
      summary: 'Soft-delete a record',
      description: `deleted_at is set and the row kept. ${PERMISSIONS}`,
      auth: 'bearer', module: moduleOfPath,
      schemas: { params: recordPathParams, response: { 204: null } },
      async handler(ctx) {
        const { module, model, id } = ctx.guard.params;
        await deleteRecord(deps, authOf(ctx), { module, model }, id);
        ctx.status = 204;
      },
    }),
  ];
}
