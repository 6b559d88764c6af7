import type { AuthState } from '../../common/context';
import { currentRequestContext } from '../../common/context';
import { newId } from '../../common/ids';
import { decodePageToken, idPosition, pageFrom } from '../../common/pagination';
import { problems } from '../../common/problems';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { selectTenantPermissions } from '../../db/queries/access/permissions.queries';
import {
  insertApiKey, revokeApiKey, selectApiKey, selectApiKeyPage, touchApiKey, type ApiKeyRow,
} from '../../db/queries/identity/api-keys.queries';
import { withTenant } from '../../db/tenant';
import { checkRolePermissions } from '../access/permission-rules';
import type { PermissionCheck } from '../access/permissions';
import type { Caller } from '../../common/context';
import { recordAudit } from '../audit/writer';
import { enqueueEvent } from '../events/publish';
import { newApiKeySecret } from './api-key-format';

export interface ApiKeysDeps {
  db: DatabasePool;
  /** What the creator may do now: a key is given only permissions its creator holds. */
  permissions: PermissionCheck;
}

/** Who manages keys: the verified caller (whose permissions bound a new key's), with what the audit record keeps of the request. */
export interface ApiKeyCaller extends Caller {
  auth: AuthState;
}

export interface ApiKeyInput {
  name: string;
  permissions: readonly string[];
  expiresAt?: string;
}

/** A key as created: its row, and the secret shown this once. */
export interface CreatedApiKey {
  row: ApiKeyRow;
  key: string;
}

type KeyEvent = 'auth.api_key.created' | 'auth.api_key.revoked';

/**
 * The event (the two types are registered in services/events/kernel-schemas.ts) and
 * the audit record of a key's creation or revocation, in the transaction of the change. Keyed by the
 * key id, so a key's two events stay in order on their partition.
 */
async function recordKeyChange(
  tx: DatabaseTransactionConnection, caller: ApiKeyCaller, type: KeyEvent, row: ApiKeyRow, data: Record<string, unknown>,
): Promise<void> {
  const traceId = currentRequestContext()?.traceId;
  const { tenantId, userId } = caller.auth;
  await enqueueEvent(tx, { tenantId, type, source: 'identity', key: row.id, data, traceId });
  const snapshot = { id: row.id, name: row.name, prefix: row.prefix, permissions: row.permissions, expiresAt: row.expiresAt };
  await recordAudit(tx, {
    tenantId,
    source: 'identity',
    action: type,
    entityType: 'api_key',
    entityId: row.id,
    actorId: userId,
    actorIp: caller.ip,
    actorUserAgent: caller.userAgent,
    before: type === 'auth.api_key.revoked' ? snapshot : null,
    after: type === 'auth.api_key.created' ? snapshot : null,
    traceId,
  });
}

/**
 * Creates a key of the caller's tenant. Its permissions must be registered, assignable keys of the
 * tenant (the rules of a custom role: 400 validation-error naming each refused key) that the caller
 * holds now (403 forbidden otherwise), so nobody can make a key stronger than themselves.
 */
export async function createApiKey(deps: ApiKeysDeps, caller: ApiKeyCaller, input: ApiKeyInput): Promise<CreatedApiKey> {
  const { tenantId, userId } = caller.auth;
  if (input.expiresAt !== undefined && Date.parse(input.expiresAt) <= Date.now()) {
    throw problems.validation([{ field: 'expiresAt', message: 'must be in the future', code: 'INVALID_VALUE' }]);
  }
  const permissions = [...new Set(input.permissions)];
  for (const permission of permissions) {
    if (!(await deps.permissions.allows(caller.auth, permission))) {
      throw problems.forbidden(`A key can hold only permissions its creator holds; you do not hold ${permission}`);
    }
  }
  const secret = newApiKeySecret();
  const row = await withTenant(deps.db, tenantId, async (tx) => {
    checkRolePermissions(permissions, { registry: await selectTenantPermissions(tx, tenantId), heldBefore: [], field: 'permissions' });
    const created = await insertApiKey(tx, {
      id: newId(), tenantId, name: input.name, prefix: secret.prefix, secretHash: secret.hash, permissions, createdBy: userId,
      expiresAt: input.expiresAt ?? null,
    });
    await recordKeyChange(tx, caller, 'auth.api_key.created', created, {
      keyId: created.id, name: created.name, prefix: created.prefix, permissions: created.permissions, createdBy: created.createdBy,
    });
    return created;
  });
  return { row, key: secret.key };
}

/** One page of the tenant's live keys, in creation order (the page envelope, api/http/pagination.ts). */
export async function listApiKeys(
  deps: ApiKeysDeps, auth: AuthState, page: { size: number; token?: string },
): Promise<{ data: ApiKeyRow[]; next_page_token?: string }> {
  const after = decodePageToken(page.token, idPosition);
  const rows = await withTenant(deps.db, auth.tenantId, (tx) => selectApiKeyPage(tx, auth.tenantId, after?.id ?? null, page.size + 1));
  return pageFrom(rows, page.size);
}

/** A live key of the tenant; another tenant's, a revoked or an unknown key is 404. */
export async function getApiKey(deps: ApiKeysDeps, auth: AuthState, id: string): Promise<ApiKeyRow> {
  const row = await withTenant(deps.db, auth.tenantId, (tx) => selectApiKey(tx, auth.tenantId, id));
  if (!row) throw problems.notFound('API key');
  return row;
}

/**
 * Revokes a live key: from its commit on, PostgreSQL announces it (migration 0038) and every gateway
 * refuses it; a key revoked already, another tenant's or an unknown one is 404.
 */
export async function revokeKey(deps: ApiKeysDeps, caller: ApiKeyCaller, id: string): Promise<void> {
  const { tenantId, userId } = caller.auth;
  await withTenant(deps.db, tenantId, async (tx) => {
    const revoked = await revokeApiKey(tx, tenantId, id, userId);
    if (!revoked) throw problems.notFound('API key');
    await recordKeyChange(tx, caller, 'auth.api_key.revoked', revoked, { keyId: revoked.id, revokedBy: userId });
  });
}

/** The channel migration 0038 announces a changed or revoked key on, with the key's id. */
export const API_KEY_CHANGES_CHANNEL = 'api_key_changes';

/**
 * The live key behind a secret's hash, found before any tenant is known (migration 0038): null for
 * an unknown or revoked key. Expiry is the caller's to check, on every use.
 */
export { selectApiKeyForSecret as liveApiKeyForSecret } from '../../db/queries/identity/api-keys.queries';

/** Notes a use of the key in its tenant; the statement writes at most once a minute per key, whichever gateway asks. */
export function noteApiKeyUse(db: DatabasePool, tenantId: string, keyId: string): Promise<void> {
  return withTenant(db, tenantId, (tx) => touchApiKey(tx, tenantId, keyId));
}
