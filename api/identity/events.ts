import { currentRequestContext } from '../../common/context';
import { enqueueEvent } from '../../common/events/publish';
import type { DatabaseTransactionConnection } from '../../db/pool';

/**
 * The auth.* events of document 3, written to the outbox in the transaction of the change they
 * report; keyed by the user id (the partition key of platform.auth.events).
 */
export function enqueueAuthEvent(
  tx: DatabaseTransactionConnection,
  type: 'auth.user.created' | 'auth.user.logged_in' | 'auth.user.logged_out' | 'auth.user.updated' | 'auth.user.deleted'
    | 'auth.password.changed',
  tenantId: string,
  userId: string,
  data: Record<string, unknown>,
): Promise<string> {
  return enqueueEvent(tx, {
    tenantId,
    type,
    source: 'identity',
    key: userId,
    data: { user_id: userId, tenant_id: tenantId, ...data },
    traceId: currentRequestContext()?.traceId,
  });
}
