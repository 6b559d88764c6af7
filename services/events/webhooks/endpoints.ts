import { newId } from '../../../common/ids';
import { keysetPageOf, positionOf, idPosition, type KeysetPage, type KeysetPageRequest } from '../../../common/pagination';
import { problems } from '../../../common/problems';
import {
  deleteWebhookEndpoint, insertWebhookEndpoint, rotateWebhookSecret, selectWebhookAttempts, selectWebhookEndpoint, selectWebhookEndpoints,
  updateWebhookEndpoint, type WebhookAttemptRow, type WebhookEndpointChange, type WebhookEndpointRow,
} from '../../../db/queries/events/webhooks.queries';
import type { DatabaseTransactionConnection } from '../../../db/pool';
import { withTenant } from '../../../db/tenant';
import type { Caller } from '../../../common/context';
import type { AuditTrail } from '../audit-trail';
import type { WebhookDeps } from './deps';
import { newWebhookSecret, PREVIOUS_SECRET_TTL_MS } from './signing';
import { checkWebhookUrl } from './url-policy';

/** The outcomes of a delivery attempt, as an endpoint's attempt listing shows them. */
export { WEBHOOK_ATTEMPT_STATUSES } from '../../../db/queries/events/webhooks.queries';

/**
 * A tenant's outbound webhook endpoints (issue 35; docs/decisions/events.md, Outbound webhooks):
 * create, list, read, change, delete, rotate the secret, list the delivery attempts. Every change
 * runs in the tenant's transaction with its audit record (which never holds a secret). Another
 * tenant's endpoint is 404 like one that does not exist.
 */

export interface WebhookEndpointView {
  id: string;
  url: string;
  eventTypes: string[];
  description: string;
  enabled: boolean;
  /** `failing`: the platform turned the endpoint off after 5 days of failed deliveries; null otherwise. */
  disabledReason: 'failing' | null;
  /** The first failed attempt since the last delivered one; null while deliveries succeed. */
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
}

/** With the signing secret: the answers of POST, GET of one endpoint and rotate-secret. */
export interface WebhookEndpointWithSecret extends WebhookEndpointView {
  secret: string;
}

export function endpointView(row: WebhookEndpointRow): WebhookEndpointView {
  return {
    id: row.id, url: row.url, eventTypes: row.eventTypes, description: row.description, enabled: row.enabled,
    disabledReason: row.disabledReason, failingSince: row.failingSince, createdAt: row.createdAt, updatedAt: row.updatedAt,
  };
}

const withSecret = (row: WebhookEndpointRow): WebhookEndpointWithSecret => ({ ...endpointView(row), secret: row.secret });

const SOURCE = 'events';
const ENTITY = 'webhook_endpoint';

function audit(
  trail: AuditTrail, tx: DatabaseTransactionConnection, caller: Caller, action: string, id: string,
  before: WebhookEndpointRow | null, after: WebhookEndpointRow | null,
) {
  return trail.record(tx, {
    tenantId: caller.tenantId, source: SOURCE, action, entityType: ENTITY, entityId: id,
    actorId: caller.userId, actorIp: caller.ip, actorUserAgent: caller.userAgent,
    before: before && { ...endpointView(before) }, after: after && { ...endpointView(after) },
  });
}

export interface NewEndpoint {
  url: string;
  eventTypes: string[];
  description?: string;
}

/** POST /webhooks/endpoints: 201 with the secret. A URL the policy refuses is 400 webhook-url-not-allowed. */
export async function createEndpoint(deps: WebhookDeps, caller: Caller, input: NewEndpoint): Promise<WebhookEndpointWithSecret> {
  const url = checkWebhookUrl(input.url, deps.policy).href;
  const { tenantId } = caller;
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await insertWebhookEndpoint(tx, {
      id: newId(), tenantId, url, eventTypes: [...new Set(input.eventTypes)], description: input.description ?? '', secret: newWebhookSecret(),
    });
    await audit(deps.audit, tx, caller, 'events.webhook_endpoint.created', row.id, null, row);
    return withSecret(row);
  });
}

/** GET /webhooks/endpoints: oldest first, in either page envelope; never a secret. */
export async function listEndpoints(deps: WebhookDeps, tenantId: string, page: KeysetPageRequest): Promise<KeysetPage<WebhookEndpointView>> {
  const after = positionOf(page, idPosition);
  const rows = await withTenant(deps.db, tenantId, (tx) => selectWebhookEndpoints(tx, tenantId, after?.id ?? null, page.size + 1));
  return keysetPageOf(rows, page, (row) => ({ id: row.id }), endpointView);
}

async function existing(tx: DatabaseTransactionConnection, tenantId: string, id: string, lock = false): Promise<WebhookEndpointRow> {
  const row = await selectWebhookEndpoint(tx, tenantId, id, lock);
  if (!row) throw problems.notFound('webhook endpoint');
  return row;
}

/** GET /webhooks/endpoints/{id}: with its secret (docs/decisions/events.md says why). */
export async function readEndpoint(deps: WebhookDeps, tenantId: string, id: string): Promise<WebhookEndpointWithSecret> {
  return withSecret(await withTenant(deps.db, tenantId, (tx) => existing(tx, tenantId, id)));
}

/** PATCH /webhooks/endpoints/{id}: url, eventTypes, enabled, description; a new URL is checked as at creation. */
export async function changeEndpoint(deps: WebhookDeps, caller: Caller, id: string, change: WebhookEndpointChange): Promise<WebhookEndpointView> {
  const checked = change.url === undefined ? change : { ...change, url: checkWebhookUrl(change.url, deps.policy).href };
  const { tenantId } = caller;
  return withTenant(deps.db, tenantId, async (tx) => {
    const before = await existing(tx, tenantId, id, true);
    const eventTypes = checked.eventTypes && [...new Set(checked.eventTypes)];
    const after = (await updateWebhookEndpoint(tx, tenantId, id, { ...checked, ...(eventTypes && { eventTypes }) }))!;
    await audit(deps.audit, tx, caller, 'events.webhook_endpoint.updated', id, before, after);
    return endpointView(after);
  });
}

/** DELETE /webhooks/endpoints/{id}: 204; its attempts go with it, running deliveries stop at their next attempt. */
export async function removeEndpoint(deps: WebhookDeps, caller: Caller, id: string): Promise<void> {
  const { tenantId } = caller;
  await withTenant(deps.db, tenantId, async (tx) => {
    const before = await existing(tx, tenantId, id, true);
    await deleteWebhookEndpoint(tx, tenantId, id);
    await audit(deps.audit, tx, caller, 'events.webhook_endpoint.deleted', id, before, null);
  });
}

/**
 * POST /webhooks/endpoints/{id}/rotate-secret: a new secret signs from now on, and the one it
 * replaces signs beside it for 24 hours (a second rotation within them drops the oldest).
 */
export async function rotateEndpointSecret(deps: WebhookDeps, caller: Caller, id: string): Promise<WebhookEndpointWithSecret> {
  const { tenantId } = caller;
  return withTenant(deps.db, tenantId, async (tx) => {
    const before = await existing(tx, tenantId, id, true);
    const expiresAt = new Date(Date.now() + PREVIOUS_SECRET_TTL_MS).toISOString();
    const after = (await rotateWebhookSecret(tx, tenantId, id, newWebhookSecret(), expiresAt))!;
    await audit(deps.audit, tx, caller, 'events.webhook_endpoint.secret_rotated', id, before, after);
    return withSecret(after);
  });
}

export interface WebhookAttemptView {
  id: string;
  eventId: string;
  eventType: string;
  attempt: number;
  status: WebhookAttemptRow['status'];
  responseStatus: number | null;
  durationMs: number | null;
  error: string | null;
  attemptedAt: string;
  nextAttemptAt: string | null;
}

/** GET /webhooks/endpoints/{id}/attempts: newest first, in either page envelope. */
export async function listAttempts(deps: WebhookDeps, tenantId: string, id: string, page: KeysetPageRequest): Promise<KeysetPage<WebhookAttemptView>> {
  const before = positionOf(page, idPosition);
  const rows = await withTenant(deps.db, tenantId, async (tx) => {
    await existing(tx, tenantId, id);
    return selectWebhookAttempts(tx, tenantId, id, before?.id ?? null, page.size + 1);
  });
  return keysetPageOf(rows, page, (row) => ({ id: row.id }), ({ endpointId: _endpointId, ...view }) => view);
}
