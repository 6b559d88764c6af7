import { anonymizeUser } from '../../../services/audit/anonymize';
import type { AuditDeps } from '../../../services/audit/deps';
import { acceptAuditRecords, type AuditRequestOrigin, type AuditWriteBody } from '../../../services/audit/intake';
import { getAuditRecord, listAuditRecords, type AuditRecordFilter, type PageRequest, type PageStyle } from '../../../services/audit/query';
import { authOf } from '../../context';
import { PAGE_SIZE_DEFAULT } from '../../../common/pagination';
import { defineRoute, feeds, type AnyRoute, type RouteContext } from '../../http/route-registry';
import {
  acceptedBatchResponse, anonymizeBody, anonymizeResponse, batchBody, entityParams, historyBQuery,
  historyQuery, recordIdParams, recordPageResponse, recordResponse, recordsQuery, writeOrBatchBody, writeOrBatchResponse,
  type AnonymizeBody, type BatchBody, type HistoryBQuery, type HistoryQuery, type PagingQuery, type RecordsQuery,
} from './records.schemas';

type NoParams = Record<string, never>;

/**
 * The audit routes (docs/reference/audit.md#resources): both route sets (A under /audit/records, B under /audit), which
 * behave the same. Writing needs only a valid token: every caller may record what it did in its
 * own tenant, attributed to itself (docs/reference/audit.md#rule-5; the permission keys of docs/reference/access.md#rule-1 have
 * no audit.write).
 * Reading needs audit.read, anonymizing audit.delete. Export is a separate route file.
 *
 * Static paths are declared before `/audit/:id`: the router tries routes in order.
 */

/** The injected fields of every record written or anonymization done in this request. */
function originOf(ctx: RouteContext): AuditRequestOrigin {
  const auth = authOf(ctx);
  return {
    tenantId: auth.tenantId,
    actorId: auth.userId,
    actorIp: ctx.ip || null,
    actorUserAgent: ctx.get('user-agent') || null,
    traceId: ctx.state.traceId,
  };
}

/** The pair the caller used picks the envelope; with neither, the route's own default. */
function pageOf(query: PagingQuery, fallback: PageStyle): PageRequest {
  const style: PageStyle = query.limit !== undefined || query.cursor !== undefined ? 'cursor'
    : query.page_size !== undefined || query.page_token !== undefined ? 'page' : fallback;
  return style === 'cursor'
    ? { style, size: query.limit ?? PAGE_SIZE_DEFAULT, token: query.cursor }
    : { style, size: query.page_size ?? PAGE_SIZE_DEFAULT, token: query.page_token };
}

function filterOf(query: RecordsQuery): AuditRecordFilter {
  const { action, entityType, entityId, actorId, since, until } = query;
  return {
    ...(action !== undefined && {
      action: action.endsWith('*') ? { value: action.slice(0, -1), prefix: true } : { value: action, prefix: false },
    }),
    entityType, entityId, actorId, since, until,
  };
}

const WRITE_DESCRIPTION = 'Answers 202 at once; the record reaches the store through Kafka (or the durable fallback buffer). '
  + 'actorId, actorIp, actorUserAgent, tenantId, timestamp and traceId come from the request; sent by the client they are ignored. '
  + 'A body {records: [...]} is a batch of at most 500 (more is 400 batch-limit-exceeded).';

const QUERY_DESCRIPTION = 'Newest first. action is exact, or a prefix with a trailing * (money.*); since is inclusive, until exclusive. '
  + 'page_size/page_token answer {data, next_page_token}; limit/cursor answer {data, meta {cursor, hasMore}}. '
  + 'Personal fields of anonymized users are masked.';

export function auditRecordRoutes(deps: AuditDeps): AnyRoute[] {
  // `getOperationId`: the read of the same route set, which the accepted record's id feeds (it is
  // found there once the audit consumer has stored it).
  const writeOne = (path: string, operationId: string, getOperationId: string) => defineRoute<NoParams, NoParams, AuditWriteBody | BatchBody>({
    namespace: 'audit', method: 'POST', path, operationId,
    summary: 'Writes an audit record (or a batch) asynchronously',
    description: WRITE_DESCRIPTION,
    auth: 'bearer',
    schemas: { body: writeOrBatchBody, response: { 202: writeOrBatchResponse }, links: { 202: feeds([getOperationId], { from: '$response.body#/auditId' }) } },
    async handler(ctx) {
      const { body } = ctx.guard;
      if ('records' in body) {
        const data = await acceptAuditRecords(deps, body.records, originOf(ctx));
        ctx.body = { status: 'queued', createdAt: data[0].createdAt, data };
      } else {
        [ctx.body] = await acceptAuditRecords(deps, [body], originOf(ctx));
      }
      ctx.status = 202;
    },
  });

  const writeBatch = (path: string, operationId: string, getOperationId: string) => defineRoute<NoParams, NoParams, BatchBody>({
    namespace: 'audit', method: 'POST', path, operationId,
    summary: 'Writes up to 500 audit records asynchronously',
    description: WRITE_DESCRIPTION,
    auth: 'bearer',
    schemas: { body: batchBody, response: { 202: acceptedBatchResponse }, links: { 202: feeds([getOperationId], { from: '$response.body#/data/0/auditId' }) } },
    async handler(ctx) {
      const data = await acceptAuditRecords(deps, ctx.guard.body.records, originOf(ctx));
      ctx.body = { status: 'queued', createdAt: data[0].createdAt, data };
      ctx.status = 202;
    },
  });

  const query = (path: string, operationId: string) => defineRoute<NoParams, RecordsQuery>({
    namespace: 'audit', method: 'GET', path, operationId,
    summary: 'Queries the audit log',
    description: QUERY_DESCRIPTION,
    auth: 'bearer', permission: 'audit.read',
    schemas: { query: recordsQuery, response: { 200: recordPageResponse } },
    async handler(ctx) {
      const { tenantId } = authOf(ctx);
      ctx.body = await listAuditRecords(deps, tenantId, filterOf(ctx.guard.query), pageOf(ctx.guard.query, 'page'));
    },
  });

  const one = (path: string, operationId: string) => defineRoute<{ id: string }>({
    namespace: 'audit', method: 'GET', path, operationId,
    summary: 'One audit record',
    description: 'An unknown id, or one of another tenant, is 404 audit-record-not-found.',
    auth: 'bearer', permission: 'audit.read',
    schemas: { params: recordIdParams, response: { 200: recordResponse } },
    async handler(ctx) {
      ctx.body = await getAuditRecord(deps, authOf(ctx).tenantId, ctx.guard.params.id);
    },
  });

  const anonymize = defineRoute<NoParams, NoParams, AnonymizeBody>({
    namespace: 'audit', method: 'POST', path: '/audit/anonymize', operationId: 'audit.anonymize',
    summary: "Anonymizes a user's personal data in the audit log",
    description: 'Synchronous. Appends an ANONYMIZE record (audit.record.anonymized); from then on every endpoint masks '
      + "the user's actor fields and the snapshots of records about the user. 403 anonymize-financial-record when money.* "
      + 'records concern the user (nothing is masked); 409 anonymize-conflict while another anonymization of the user runs.',
    auth: 'bearer', permission: 'audit.delete',
    schemas: { body: anonymizeBody, response: { 200: anonymizeResponse } },
    async handler(ctx) {
      ctx.body = await anonymizeUser(deps, ctx.guard.body.userId, originOf(ctx));
    },
  });

  return [
    // Route set A.
    writeOne('/audit/records', 'audit.records.write', 'audit.records.get'),
    writeBatch('/audit/records/batch', 'audit.records.writeBatch', 'audit.records.get'),
    query('/audit/records', 'audit.records.query'),
    defineRoute<{ type: string; id: string }, HistoryQuery>({
      namespace: 'audit', method: 'GET', path: '/audit/entity/:type/:id', operationId: 'audit.records.entityHistory',
      summary: "An entity's audit history",
      description: 'Newest first; since is inclusive. limit/cursor (default) or page_size/page_token.',
      auth: 'bearer', permission: 'audit.read',
      schemas: { params: entityParams, query: historyQuery, response: { 200: recordPageResponse } },
      async handler(ctx) {
        const { type, id } = ctx.guard.params;
        const filter = { entityType: type, entityId: id, since: ctx.guard.query.since };
        ctx.body = await listAuditRecords(deps, authOf(ctx).tenantId, filter, pageOf(ctx.guard.query, 'cursor'));
      },
    }),
    one('/audit/records/:id', 'audit.records.get'),
    // Route set B.
    writeOne('/audit', 'audit.write', 'audit.get'),
    writeBatch('/audit/batch', 'audit.writeBatch', 'audit.get'),
    query('/audit', 'audit.query'),
    defineRoute<NoParams, HistoryBQuery>({
      namespace: 'audit', method: 'GET', path: '/audit/entity-history', operationId: 'audit.entityHistory',
      summary: "An entity's audit history",
      description: 'Newest first; since is inclusive. page_size/page_token (default) or limit/cursor.',
      auth: 'bearer', permission: 'audit.read',
      schemas: { query: historyBQuery, response: { 200: recordPageResponse } },
      async handler(ctx) {
        const { entityType, entityId, since } = ctx.guard.query;
        ctx.body = await listAuditRecords(deps, authOf(ctx).tenantId, { entityType, entityId, since }, pageOf(ctx.guard.query, 'page'));
      },
    }),
    anonymize,
    one('/audit/:id', 'audit.get'),
  ];
}
