import Joi from 'joi';
import { isUuid } from '../../common/ids';
import { problems } from '../../common/problems';
import {
  selectAuditRecord, selectAuditRecords, type AuditKeyset, type AuditRecordFilter, type AuditRecordRow,
} from '../../db/queries/audit/audit-read.queries';
import type { DatabaseTransactionConnection } from '../../db/pool';
import { decodePageToken, encodePageToken } from '../../common/pagination';
import { anonymizationTiming, readAfterAnonymizations } from './anonymization-lock';
import type { AuditDeps } from './deps';

export type { AuditRecordFilter };

/**
 * Queries of the audit API: lists (filters, both page envelopes of docs/reference/audit.md#rule-11), one record, and
 * an entity's history. Reads run on the read-only reporting pool under the caller's tenant, through
 * the masking view, after waiting for anonymizations of the tenant in progress.
 */

/** An audit record as the API answers it (docs/reference/audit.md, Resources). */
export interface AuditRecordView {
  id: string;
  action: string;
  entityType: string;
  entityId: string;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
  meta: Record<string, unknown> | null;
  actorId: string | null;
  actorIp: string | null;
  actorUserAgent: string | null;
  impersonatorId?: string;
  tenantId: string;
  timestamp: string;
  traceId: string | null;
}

/** before is omitted on creation and after on deletion (docs/reference/audit.md, Resources); so are absent impersonators. */
export function recordView(row: AuditRecordRow): AuditRecordView {
  const { before, after, impersonatorId, ...rest } = row;
  return {
    ...rest,
    ...(before !== null && { before }),
    ...(after !== null && { after }),
    ...(impersonatorId !== null && { impersonatorId }),
  };
}

/**
 * Both envelopes of docs/reference/audit.md#rule-11: `page` answers {data, next_page_token}, `cursor` answers
 * {data, meta: {cursor, hasMore}}. Both are keyset pages over (timestamp, id), newest first; the
 * token is opaque to clients (base64url of the last row's position).
 */
export type PageStyle = 'page' | 'cursor';

export interface PageRequest {
  style: PageStyle;
  size: number;
  token?: string;
}

export type RecordPage =
  | { data: AuditRecordView[]; next_page_token?: string }
  | { data: AuditRecordView[]; meta: { cursor: string | null; hasMore: boolean } };

/** The keyset of the audit lists: the last record's time and id. */
const auditPosition = Joi.object<AuditKeyset>({ timestamp: Joi.string().isoDate(), id: Joi.string().guid() });

/** What reads need: the reporting pool, and the configuration of the wait for anonymizations. */
export type AuditReadDeps = Pick<AuditDeps, 'analyticsDb' | 'config'>;

/** Reads on the reporting pool once no anonymization of the tenant is in progress. */
async function read<T>(deps: AuditReadDeps, tenantId: string, work: (tx: DatabaseTransactionConnection) => Promise<T>): Promise<T> {
  return (await readAfterAnonymizations(deps.analyticsDb, tenantId, work, anonymizationTiming(deps.config))).value;
}

export async function listAuditRecords(
  deps: AuditReadDeps, tenantId: string, filter: AuditRecordFilter, page: PageRequest,
): Promise<RecordPage> {
  const after = decodePageToken(page.token, auditPosition, page.style === 'page' ? 'page_token' : 'cursor') ?? undefined;
  // One row more than asked tells whether another page exists.
  const rows = await read(deps, tenantId, (tx) => selectAuditRecords(tx, tenantId, filter, after, page.size + 1));
  const hasMore = rows.length > page.size;
  const data = rows.slice(0, page.size).map(recordView);
  const last = data.at(-1);
  const next = hasMore && last ? encodePageToken({ timestamp: last.timestamp, id: last.id }) : undefined;
  if (page.style === 'cursor') return { data, meta: { cursor: next ?? null, hasMore } };
  return next === undefined ? { data } : { data, next_page_token: next };
}

export async function getAuditRecord(deps: AuditReadDeps, tenantId: string, id: string): Promise<AuditRecordView> {
  // A malformed id can name no record: the same 404 as an unknown one or another tenant's.
  const row = isUuid(id) ? await read(deps, tenantId, (tx) => selectAuditRecord(tx, tenantId, id)) : null;
  if (!row) throw problems.auditRecordNotFound(id);
  return recordView(row);
}
