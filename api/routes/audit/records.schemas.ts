import Joi from 'joi';
import type { AuditWriteBody } from '../../../services/audit/intake';
import { uuid } from '../../http/ids';
import { pageQuery, cursorQuery } from '../../http/pagination';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../../../common/pagination';

/**
 * Request and response schemas of the audit routes (docs/reference/audit.md#resources;
 * both route sets). Field names are the same in both sets: the reference shows no other for audit.
 */

/**
 * The fields the service injects (docs/reference/audit.md#rule-4). A client that sends them is not
 * refused, its values are dropped: the record is written with the request's own values, which is
 * what "never accepted from the client" asks, and a client that echoes a record back still works.
 */
const injected = {
  actorId: Joi.any().strip(),
  actorIp: Joi.any().strip(),
  actorUserAgent: Joi.any().strip(),
  impersonatorId: Joi.any().strip(),
  tenantId: Joi.any().strip(),
  timestamp: Joi.any().strip(),
  traceId: Joi.any().strip(),
};

const snapshot = Joi.object().unknown(true).allow(null);

/** domain.entity.verb in practice; no `*` (the query's prefix wildcard) and no spaces. */
const action = Joi.string().max(200).pattern(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'action (letters, digits, . _ : -)');

export const writeBody = Joi.object<AuditWriteBody>({
  action: action.required(),
  entityType: Joi.string().min(1).max(100).required(),
  entityId: Joi.string().min(1).max(200).required(),
  before: snapshot,
  after: snapshot,
  meta: snapshot,
  ...injected,
});

export interface BatchBody {
  records: AuditWriteBody[];
}

/** At most 500 records; the handler answers more with 400 batch-limit-exceeded, not a validation error. */
export const batchBody = Joi.object<BatchBody>({
  records: Joi.array().items(writeBody).min(1).required(),
});

/** POST /audit/records and POST /audit also take a batch, so a client need not know the batch paths. */
export const writeOrBatchBody = Joi.alternatives<AuditWriteBody | BatchBody>()
  .conditional(Joi.object({ records: Joi.exist() }).unknown(), { then: batchBody, otherwise: writeBody });

const accepted = {
  auditId: Joi.string().uuid().required(),
  status: Joi.string().valid('queued').required(),
  createdAt: Joi.string().isoDate().required(),
};

export const acceptedResponse = Joi.object(accepted);

/** A batch: the ids in input order under `data`, with the batch's status and time beside them. */
export const acceptedBatchResponse = Joi.object({
  status: Joi.string().valid('queued').required(),
  createdAt: Joi.string().isoDate().required(),
  data: Joi.array().items(Joi.object(accepted)).required(),
});

export const writeOrBatchResponse = Joi.alternatives().try(acceptedResponse, acceptedBatchResponse);

/** No defaults here: which pair the caller used picks the response envelope. */
const size = Joi.number().integer().min(1).max(PAGE_SIZE_MAX);
const paging = {
  page_size: size.description(`Items per page (1 to ${PAGE_SIZE_MAX}, default ${PAGE_SIZE_DEFAULT}); answers {data, next_page_token}`),
  page_token: pageQuery.page_token,
  limit: size.description(`Items per page (1 to ${PAGE_SIZE_MAX}, default ${PAGE_SIZE_DEFAULT}); answers {data, meta {cursor, hasMore}}; not with page_size or page_token`),
  cursor: cursorQuery.cursor,
};

export interface PagingQuery {
  page_size?: number;
  page_token?: string;
  limit?: number;
  cursor?: string;
}

/** The two pairs do not mix. */
const onePair = (schema: Joi.ObjectSchema) => schema
  .without('limit', ['page_size', 'page_token'])
  .without('cursor', ['page_size', 'page_token']);

const isoTime = Joi.string().isoDate();

export interface RecordsQuery extends PagingQuery {
  action?: string;
  entityType?: string;
  entityId?: string;
  actorId?: string;
  since?: string;
  until?: string;
}

export const recordsQuery = onePair(Joi.object<RecordsQuery>({
  action: Joi.string().max(201).pattern(/^[A-Za-z0-9._:-]*\*?$/, 'action, or its start followed by *')
    .description('Exact action, or a prefix followed by * (money.*)'),
  entityType: Joi.string().max(100),
  entityId: Joi.string().max(200),
  actorId: Joi.string().max(200),
  since: isoTime.description('Inclusive lower bound of timestamp'),
  until: isoTime.description('Exclusive upper bound of timestamp'),
  ...paging,
}));

export interface HistoryQuery extends PagingQuery {
  since?: string;
}

export const historyQuery = onePair(Joi.object<HistoryQuery>({ since: isoTime.description('Inclusive lower bound'), ...paging }));

export interface HistoryBQuery extends HistoryQuery {
  entityType: string;
  entityId: string;
}

export const historyBQuery = onePair(Joi.object<HistoryBQuery>({
  entityType: Joi.string().max(100).required(),
  entityId: Joi.string().max(200).required(),
  since: isoTime.description('Inclusive lower bound'),
  ...paging,
}));

export const recordIdParams = Joi.object<{ id: string }>({ id: Joi.string().max(100).required() });

export const entityParams = Joi.object<{ type: string; id: string }>({
  type: Joi.string().max(100).required(),
  id: Joi.string().max(200).required(),
});

const snapshotOut = Joi.object().unknown(true);

export const recordResponse = Joi.object({
  id: Joi.string().uuid().required(),
  action: Joi.string().required(),
  entityType: Joi.string().required(),
  entityId: Joi.string().required(),
  before: snapshotOut,
  after: snapshotOut,
  meta: snapshotOut.allow(null).required(),
  actorId: Joi.string().allow(null).required(),
  actorIp: Joi.string().allow(null).required(),
  actorUserAgent: Joi.string().allow(null).required(),
  impersonatorId: Joi.string(),
  tenantId: Joi.string().uuid().required(),
  timestamp: Joi.string().isoDate().required(),
  traceId: Joi.string().allow(null).required(),
});

export const recordPageResponse = Joi.alternatives().try(
  Joi.object({ data: Joi.array().items(recordResponse).required(), next_page_token: Joi.string() }),
  Joi.object({
    data: Joi.array().items(recordResponse).required(),
    meta: Joi.object({ cursor: Joi.string().allow(null).required(), hasMore: Joi.boolean().required() }).required(),
  }),
);

export interface AnonymizeBody {
  userId: string;
}

export const anonymizeBody = Joi.object<AnonymizeBody>({ userId: uuid.required() });

export const anonymizeResponse = Joi.object({
  userId: Joi.string().uuid().required(),
  recordsAffected: Joi.number().integer().min(0).required(),
  completedAt: Joi.string().isoDate().required(),
});
