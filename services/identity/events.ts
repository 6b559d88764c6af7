import { currentRequestContext } from '../../common/context';
import { enqueueEvent, type EventInput } from '../events/publish';
import type { DatabaseTransactionConnection } from '../../db/pool';

export type AuthEventType = 'auth.user.created' | 'auth.user.logged_in' | 'auth.user.logged_out' | 'auth.user.updated'
  | 'auth.user.deleted' | 'auth.password.changed' | SecurityChangeEventType;

/**
 * The changes of an account's way of signing in that its holder is mailed about (ASVS 2.2.3, 2.5.5,
 * 2.8.5; services/notify/security-mail.ts), besides auth.password.changed.
 */
export type SecurityChangeEventType = 'auth.mfa.enabled' | 'auth.mfa.disabled' | 'auth.recovery_codes.regenerated'
  | 'auth.provider.linked' | 'auth.provider.unlinked' | 'auth.mfa.code_reused';

/**
 * An auth.* event (docs/reference/identity.md#events), keyed by the user id (the partition key of platform.auth.events).
 */
export function authEvent(type: AuthEventType, tenantId: string, userId: string, data: Record<string, unknown>): EventInput {
  return {
    tenantId,
    type,
    source: 'identity',
    key: userId,
    data: { user_id: userId, tenant_id: tenantId, ...data },
    traceId: currentRequestContext()?.traceId,
  };
}

/** Writes an auth.* event to the outbox in the transaction of the change it reports. */
export function enqueueAuthEvent(
  tx: DatabaseTransactionConnection,
  type: AuthEventType,
  tenantId: string,
  userId: string,
  data: Record<string, unknown>,
): Promise<string> {
  return enqueueEvent(tx, authEvent(type, tenantId, userId, data));
}
