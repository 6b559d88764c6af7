import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * The tenant's API keys (table api_keys, migration 0038). The routes see live keys only: a revoked
 * key keeps its row for the audit trail but is gone from listings and lookups.
 */

const apiKeyRow = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  permissions: z.array(z.string()),
  createdBy: z.string(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
});
export type ApiKeyRow = z.infer<typeof apiKeyRow>;

const API_KEY_COLUMNS = sql.fragment`
  id, name, prefix, permissions, created_by AS "createdBy", created_at AS "createdAt",
  expires_at AS "expiresAt", last_used_at AS "lastUsedAt"
`;

export interface NewApiKey {
  id: string;
  tenantId: string;
  name: string;
  prefix: string;
  secretHash: Buffer;
  permissions: readonly string[];
  createdBy: string;
  expiresAt: string | null;
}

export function insertApiKey(tx: DatabaseTransactionConnection, key: NewApiKey): Promise<ApiKeyRow> {
  return tx.one(sql.type(apiKeyRow)`
    INSERT INTO api_keys (id, tenant_id, name, prefix, secret_hash, permissions, created_by, expires_at)
    VALUES (${key.id}, ${key.tenantId}, ${key.name}, ${key.prefix}, ${sql.binary(key.secretHash)},
            ${sql.array([...key.permissions], 'text')}, ${key.createdBy}, ${key.expiresAt}::timestamptz)
    RETURNING ${API_KEY_COLUMNS}
  `);
}

/** One page of the tenant's live keys by id (creation order); one row more than asked tells whether a next page exists. */
export function selectApiKeyPage(
  tx: DatabaseTransactionConnection, tenantId: string, afterId: string | null, limit: number,
): Promise<readonly ApiKeyRow[]> {
  const keyset = afterId ? sql.fragment`AND id > ${afterId}` : sql.fragment``;
  return tx.any(sql.type(apiKeyRow)`
    SELECT ${API_KEY_COLUMNS} FROM api_keys
    WHERE tenant_id = ${tenantId} AND revoked_at IS NULL ${keyset}
    ORDER BY id
    LIMIT ${limit}
  `);
}

export function selectApiKey(tx: DatabaseTransactionConnection, tenantId: string, id: string): Promise<ApiKeyRow | null> {
  return tx.maybeOne(sql.type(apiKeyRow)`
    SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE tenant_id = ${tenantId} AND id = ${id} AND revoked_at IS NULL
  `);
}

/** Revokes a live key; null when the tenant has no such live key. Its trigger announces the key (migration 0038). */
export function revokeApiKey(tx: DatabaseTransactionConnection, tenantId: string, id: string, revokedBy: string): Promise<ApiKeyRow | null> {
  return tx.maybeOne(sql.type(apiKeyRow)`
    UPDATE api_keys SET revoked_at = now(), revoked_by = ${revokedBy}
    WHERE tenant_id = ${tenantId} AND id = ${id} AND revoked_at IS NULL
    RETURNING ${API_KEY_COLUMNS}
  `);
}

const verifiedKeyRow = z.object({
  id: z.string(),
  tenantId: z.string(),
  permissions: z.array(z.string()),
  expiresAt: z.string().nullable(),
});
export type VerifiedApiKeyRow = z.infer<typeof verifiedKeyRow>;

/**
 * The live key behind a secret's hash, found before any tenant is known through the SECURITY DEFINER
 * function auth_api_key_for_secret (migration 0038): null for an unknown or revoked key.
 */
export function selectApiKeyForSecret(db: CommonQueryMethods, secretHash: Buffer): Promise<VerifiedApiKeyRow | null> {
  return db.maybeOne(sql.type(verifiedKeyRow)`
    SELECT id, tenant_id AS "tenantId", permissions, expires_at AS "expiresAt"
    FROM auth_api_key_for_secret(${sql.binary(secretHash)})
  `);
}

/**
 * Notes a use of the key, at most once a minute: a use within the minute after the last one writes
 * nothing, whichever gateway served it, so a busy key costs one row update a minute.
 */
export async function touchApiKey(tx: DatabaseTransactionConnection, tenantId: string, id: string): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE api_keys SET last_used_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${id} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
  `);
}
