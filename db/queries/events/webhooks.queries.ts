import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * Outbound webhook endpoints and their delivery attempts (migration 0040). Every statement runs
 * inside withTenant and names the tenant as well (tenant scoping twice), so another tenant's
 * endpoint is never read, changed or delivered to.
 */

export const webhookEndpointRow = z.object({
  id: z.string(),
  tenantId: z.string(),
  url: z.string(),
  eventTypes: z.array(z.string()),
  description: z.string(),
  enabled: z.boolean(),
  secret: z.string(),
  previousSecret: z.string().nullable(),
  previousSecretExpiresAt: z.string().nullable(),
  failingSince: z.string().nullable(),
  disabledReason: z.enum(['failing']).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type WebhookEndpointRow = z.infer<typeof webhookEndpointRow>;

const endpointColumns = sql.fragment`
  id, tenant_id AS "tenantId", url, event_types AS "eventTypes", description, enabled, secret,
  previous_secret AS "previousSecret", previous_secret_expires_at AS "previousSecretExpiresAt",
  failing_since AS "failingSince", disabled_reason AS "disabledReason", created_at AS "createdAt", updated_at AS "updatedAt"
`;

export interface NewWebhookEndpoint {
  id: string;
  tenantId: string;
  url: string;
  eventTypes: readonly string[];
  description: string;
  secret: string;
}

export function insertWebhookEndpoint(tx: DatabaseTransactionConnection, endpoint: NewWebhookEndpoint): Promise<WebhookEndpointRow> {
  return tx.one(sql.type(webhookEndpointRow)`
    INSERT INTO webhook_endpoints (id, tenant_id, url, event_types, description, secret)
    VALUES (${endpoint.id}, ${endpoint.tenantId}, ${endpoint.url}, ${sql.array(endpoint.eventTypes, 'text')}, ${endpoint.description},
            ${endpoint.secret})
    RETURNING ${endpointColumns}
  `);
}

/** The tenant's endpoints after `afterId` (oldest first: ids are UUID v7), `limit` of them. */
export function selectWebhookEndpoints(
  tx: DatabaseTransactionConnection, tenantId: string, afterId: string | null, limit: number,
): Promise<readonly WebhookEndpointRow[]> {
  return tx.any(sql.type(webhookEndpointRow)`
    SELECT ${endpointColumns} FROM webhook_endpoints
    WHERE tenant_id = ${tenantId} ${afterId === null ? sql.fragment`` : sql.fragment`AND id > ${afterId}`}
    ORDER BY id LIMIT ${limit}
  `);
}

/** One endpoint of the tenant, or null; `lock` takes it FOR UPDATE (a change, a delivery's bookkeeping). */
export function selectWebhookEndpoint(
  tx: DatabaseTransactionConnection, tenantId: string, id: string, lock = false,
): Promise<WebhookEndpointRow | null> {
  return tx.maybeOne(sql.type(webhookEndpointRow)`
    SELECT ${endpointColumns} FROM webhook_endpoints WHERE tenant_id = ${tenantId} AND id = ${id}
    ${lock ? sql.fragment`FOR UPDATE` : sql.fragment``}
  `);
}

/** The tenant's enabled endpoints: the dispatcher matches an event's type against them. */
export function selectEnabledWebhookEndpoints(tx: DatabaseTransactionConnection, tenantId: string): Promise<readonly WebhookEndpointRow[]> {
  return tx.any(sql.type(webhookEndpointRow)`
    SELECT ${endpointColumns} FROM webhook_endpoints WHERE tenant_id = ${tenantId} AND enabled ORDER BY id
  `);
}

const activeRow = z.object({ active: z.boolean() });

/**
 * Whether the tenant has an enabled endpoint: one row or none. A statement for TenantReader
 * (db/tenant-reads.ts), which runs it in the tenant's transaction like withTenant.
 */
export function enabledWebhookEndpointStatement(tenantId: string) {
  return sql.type(activeRow)`
    SELECT true AS active FROM webhook_endpoints WHERE tenant_id = ${tenantId} AND enabled LIMIT 1
  `;
}

export interface WebhookEndpointChange {
  url?: string;
  eventTypes?: readonly string[];
  description?: string;
  enabled?: boolean;
}

/**
 * PATCH: the members given change, the others stay. Turning an endpoint on again clears why the
 * platform had turned it off and its failing streak, so five more days of failures are needed
 * before it is turned off again.
 */
export function updateWebhookEndpoint(
  tx: DatabaseTransactionConnection, tenantId: string, id: string, change: WebhookEndpointChange,
): Promise<WebhookEndpointRow | null> {
  const sets = [sql.fragment`updated_at = now()`];
  if (change.url !== undefined) sets.push(sql.fragment`url = ${change.url}`);
  if (change.eventTypes !== undefined) sets.push(sql.fragment`event_types = ${sql.array(change.eventTypes, 'text')}`);
  if (change.description !== undefined) sets.push(sql.fragment`description = ${change.description}`);
  if (change.enabled !== undefined) {
    sets.push(sql.fragment`enabled = ${change.enabled}`);
    if (change.enabled) sets.push(sql.fragment`disabled_reason = NULL, failing_since = NULL`);
  }
  return tx.maybeOne(sql.type(webhookEndpointRow)`
    UPDATE webhook_endpoints SET ${sql.join(sets, sql.fragment`, `)}
    WHERE tenant_id = ${tenantId} AND id = ${id}
    RETURNING ${endpointColumns}
  `);
}

/** The new secret signs from now on; the one it replaces keeps signing beside it until `previousExpiresAt`. */
export function rotateWebhookSecret(
  tx: DatabaseTransactionConnection, tenantId: string, id: string, secret: string, previousExpiresAt: string,
): Promise<WebhookEndpointRow | null> {
  return tx.maybeOne(sql.type(webhookEndpointRow)`
    UPDATE webhook_endpoints
    SET previous_secret = secret, previous_secret_expires_at = ${previousExpiresAt}, secret = ${secret}, updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${id}
    RETURNING ${endpointColumns}
  `);
}

const deletedRow = z.object({ id: z.string() });

/** Deletes the endpoint and its attempts (ON DELETE CASCADE); false when the tenant has no such endpoint. */
export async function deleteWebhookEndpoint(tx: DatabaseTransactionConnection, tenantId: string, id: string): Promise<boolean> {
  const row = await tx.maybeOne(sql.type(deletedRow)`
    DELETE FROM webhook_endpoints WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING id
  `);
  return row !== null;
}

/**
 * A failed attempt's mark on its endpoint (locked by the caller): the failing streak starts at the
 * first failure after a success (`at`); with `disable` (the caller found the streak long enough)
 * the endpoint is turned off, disabled_reason 'failing'.
 */
export function markWebhookEndpointFailing(
  tx: DatabaseTransactionConnection, tenantId: string, id: string, at: string, disable: boolean,
): Promise<WebhookEndpointRow | null> {
  return tx.maybeOne(sql.type(webhookEndpointRow)`
    UPDATE webhook_endpoints
    SET failing_since = coalesce(failing_since, ${at}::timestamptz),
        enabled = enabled AND NOT ${disable},
        disabled_reason = CASE WHEN ${disable} THEN 'failing' ELSE disabled_reason END,
        updated_at = CASE WHEN ${disable} THEN now() ELSE updated_at END
    WHERE tenant_id = ${tenantId} AND id = ${id}
    RETURNING ${endpointColumns}
  `);
}

/** A delivered attempt ends the endpoint's failing streak. */
export async function clearWebhookEndpointFailing(tx: DatabaseTransactionConnection, tenantId: string, id: string): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE webhook_endpoints SET failing_since = NULL WHERE tenant_id = ${tenantId} AND id = ${id} AND failing_since IS NOT NULL
  `);
}

export const WEBHOOK_ATTEMPT_STATUSES = ['succeeded', 'failed', 'pending'] as const;
export type WebhookAttemptStatus = (typeof WEBHOOK_ATTEMPT_STATUSES)[number];

export const webhookAttemptRow = z.object({
  id: z.string(),
  endpointId: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  attempt: z.number(),
  status: z.enum(WEBHOOK_ATTEMPT_STATUSES),
  responseStatus: z.number().nullable(),
  durationMs: z.number().nullable(),
  error: z.string().nullable(),
  attemptedAt: z.string(),
  nextAttemptAt: z.string().nullable(),
});
export type WebhookAttemptRow = z.infer<typeof webhookAttemptRow>;

const attemptColumns = sql.fragment`
  id, endpoint_id AS "endpointId", event_id AS "eventId", event_type AS "eventType", attempt, status,
  response_status AS "responseStatus", duration_ms AS "durationMs", error, attempted_at AS "attemptedAt",
  next_attempt_at AS "nextAttemptAt"
`;

export interface NewWebhookAttempt {
  id: string;
  tenantId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  workflowRunId: string;
  attempt: number;
  attemptedAt: string;
}

/**
 * The attempt, pending, just before its request. The same attempt tried again (its activity was
 * retried after a crash) finds its row and is pending again; its id stays.
 */
export async function startWebhookAttempt(tx: DatabaseTransactionConnection, attempt: NewWebhookAttempt): Promise<string> {
  const row = await tx.one(sql.type(deletedRow)`
    INSERT INTO webhook_attempts (id, tenant_id, endpoint_id, event_id, event_type, workflow_run_id, attempt, status, attempted_at)
    VALUES (${attempt.id}, ${attempt.tenantId}, ${attempt.endpointId}, ${attempt.eventId}, ${attempt.eventType},
            ${attempt.workflowRunId}, ${attempt.attempt}, 'pending', ${attempt.attemptedAt})
    ON CONFLICT ON CONSTRAINT webhook_attempts_once DO UPDATE SET
      status = 'pending', response_status = NULL, duration_ms = NULL, error = NULL, next_attempt_at = NULL
    RETURNING id
  `);
  return row.id;
}

export interface WebhookAttemptOutcome {
  status: Exclude<WebhookAttemptStatus, 'pending'>;
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
  nextAttemptAt: string | null;
}

export async function settleWebhookAttempt(
  tx: DatabaseTransactionConnection, tenantId: string, id: string, outcome: WebhookAttemptOutcome,
): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE webhook_attempts
    SET status = ${outcome.status}, response_status = ${outcome.responseStatus}, duration_ms = ${outcome.durationMs},
        error = ${outcome.error}, next_attempt_at = ${outcome.nextAttemptAt}
    WHERE tenant_id = ${tenantId} AND id = ${id}
  `);
}

/** The endpoint's attempts before `beforeId`, newest first (ids are UUID v7), `limit` of them. */
export function selectWebhookAttempts(
  tx: DatabaseTransactionConnection, tenantId: string, endpointId: string, beforeId: string | null, limit: number,
): Promise<readonly WebhookAttemptRow[]> {
  return tx.any(sql.type(webhookAttemptRow)`
    SELECT ${attemptColumns} FROM webhook_attempts
    WHERE tenant_id = ${tenantId} AND endpoint_id = ${endpointId}
      ${beforeId === null ? sql.fragment`` : sql.fragment`AND id < ${beforeId}`}
    ORDER BY id DESC LIMIT ${limit}
  `);
}
