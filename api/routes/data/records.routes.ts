import { authOf } from '../../context';
import { callerOf } from '../caller';
import { MAX_NESTED_RECORDS } from '../../../services/data/nested-writes';
import type { RawQuery } from '../../../services/data/query/parse';
import {
  createRecord, deleteRecord, listRecords, readRecord, updateRecord, type DataDeps,
} from '../../../services/data/records';
import { defineRoute, type AnyRoute, type RouteContext } from '../../http/route-registry';
import { recordOperations } from './model-operations';
import {
  contentRangeOf, FILTER_GRAMMAR, listHeaders, listQuery, listResponseHeaders, modelPathParams, prefersExactCount, record, recordBody,
  recordList, recordPathParams, recordQuery, type ModelParams, type RecordParams,
} from './records.schemas';

type Body = Record<string, unknown>;

/** The module is the path's: 404 module-not-found unless the tenant has it installed and active. */
const moduleOfPath = (params: Record<string, string>) => params.module;

/** The query string as sent: the query language's parser checks every key and value itself. */
const rawQuery = (ctx: RouteContext) => ctx.query as RawQuery;

const BUDGET = 'A read running past its budget (DATA_STATEMENT_TIMEOUT_MS, within the gateway\'s deadline) is cancelled: 504 gateway-timeout.';

const HOOKS = 'The module\'s before hooks may change the record or refuse it with a 4xx problem of their own; every change is an event `{module}.{model}.created|updated|deleted` on platform.data.events and an audit record.';

const PERMISSIONS = 'Permission `{module}.{model}.{action}` (read, create, update, delete; `write` holds create and update; `{module}.*`), checked per request: 403 forbidden.';

/**
 * The data layer (docs/reference/data.md#resources): five endpoints for every model a module flags `autoApi`, served under
 * `/data/{module}/{model}`. The module and model are path parameters, so the permission is checked
 * by the service for the model named, not declared on the route; the OpenAPI document shows the
 * concrete operations of each model (model-operations.ts).
 */
export function dataRecordRoutes(deps: DataDeps): AnyRoute[] {
  // The document shows each route once per autoApi model, from the catalogue the handlers serve.
  const documented = recordOperations(deps.catalogue);
  return [
    defineRoute<ModelParams, Record<string, never>, undefined, { Prefer?: string }>({
      namespace: 'data', method: 'GET', path: '/data/:module/:model', operationId: 'data.records.list',
      documentedAs: documented.list,
      summary: 'Records of a model: filters, order, select with relations, keyset pages',
      description: `${FILTER_GRAMMAR} Soft-deleted records are left out unless \`deleted_at=is.notnull\`. `
        + `\`Prefer: count=exact\` adds \`count\` (answered with \`Preference-Applied: count=exact\`). `
        + `\`Content-Range\` gives the page's rows as PostgREST does (\`0-19/345\`, the total only when counted). ${BUDGET} ${PERMISSIONS}`,
      auth: 'bearer', module: moduleOfPath,
      schemas: { params: modelPathParams, query: listQuery, headers: listHeaders, response: { 200: recordList }, responseHeaders: { 200: listResponseHeaders } },
      async handler(ctx) {
        const { module, model } = ctx.guard.params;
        const count = prefersExactCount(ctx.guard.headers.Prefer);
        const { body, pageStart } = await listRecords(deps, authOf(ctx), { module, model }, rawQuery(ctx), { count });
        ctx.body = body;
        ctx.set('Content-Range', contentRangeOf(pageStart, body.data.length, body.count));
        if (count) ctx.set('Preference-Applied', 'count=exact');
      },
    }),
    defineRoute<ModelParams, Record<string, never>, Body>({
      namespace: 'data', method: 'POST', path: '/data/:module/:model', operationId: 'data.records.create',
      documentedAs: documented.create,
      summary: 'Create a record',
      description: `The model's fields; id, tenantId and the timestamps are the platform's and refused in a body. `
        + `A key naming a one-to-many relation (\`contacts: [...]\` on companies) nests records created in the same transaction, `
        + `their reference set to the new record (never named in them), one level deep, at most ${MAX_NESTED_RECORDS}; the answer embeds them under that name. `
        + `Every record counts against the plan's \`records\` limit: 402 plan-limit-exceeded past it. ${HOOKS} ${PERMISSIONS}`,
      auth: 'bearer', module: moduleOfPath,
      schemas: { params: modelPathParams, body: recordBody, response: { 201: record } },
      async handler(ctx) {
        const { module, model } = ctx.guard.params;
        ctx.body = await createRecord(deps, authOf(ctx), callerOf(ctx), { module, model }, ctx.guard.body);
        ctx.status = 201;
      },
    }),
    defineRoute<RecordParams>({
      namespace: 'data', method: 'GET', path: '/data/:module/:model/:id', operationId: 'data.records.get',
      documentedAs: documented.get,
      summary: 'One record, with relations through select',
      description: `A soft-deleted record, or another tenant's, is 404. ${BUDGET} ${PERMISSIONS}`,
      auth: 'bearer', module: moduleOfPath,
      schemas: { params: recordPathParams, query: recordQuery, response: { 200: record } },
      async handler(ctx) {
        const { module, model, id } = ctx.guard.params;
        ctx.body = await readRecord(deps, authOf(ctx), { module, model }, id, rawQuery(ctx));
      },
    }),
    defineRoute<RecordParams, Record<string, never>, Body>({
      namespace: 'data', method: 'PATCH', path: '/data/:module/:model/:id', operationId: 'data.records.update',
      documentedAs: documented.update,
      summary: 'Change the fields given of a record',
      description: `Only the fields sent change. ${HOOKS} ${PERMISSIONS}`,
      auth: 'bearer', module: moduleOfPath,
      schemas: { params: recordPathParams, body: recordBody, response: { 200: record } },
      async handler(ctx) {
        const { module, model, id } = ctx.guard.params;
        ctx.body = await updateRecord(deps, authOf(ctx), callerOf(ctx), { module, model }, id, ctx.guard.body);
      },
    }),
    defineRoute<RecordParams>({
      namespace: 'data', method: 'DELETE', path: '/data/:module/:model/:id', operationId: 'data.records.delete',
      documentedAs: documented.delete,
      summary: 'Soft-delete a record',
      description: `deleted_at is set and the row kept; it no longer counts against the plan's \`records\`. ${HOOKS} ${PERMISSIONS}`,
      auth: 'bearer', module: moduleOfPath,
      schemas: { params: recordPathParams, response: { 204: null } },
      async handler(ctx) {
        const { module, model, id } = ctx.guard.params;
        await deleteRecord(deps, authOf(ctx), callerOf(ctx), { module, model }, id);
        ctx.status = 204;
      },
    }),
  ];
}
