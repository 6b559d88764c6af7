import type { DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import type { IdentityDeps } from './deps';

/** The channel migration 0024 announces every change of an account or its memberships on, with the account's id. */
export const ACCOUNT_CHANGES_CHANNEL = 'account_changes';

/**
 * Runs work that may change accounts or their memberships; every account it reports through
 * `changed` has its /auth/me answers forgotten once the work has settled (its transaction ended,
 * committed or not), so the account's next request through this gateway reads the change without
 * waiting for PostgreSQL's announcement of it (api/runtime/me-cache.ts).
 */
export async function changingAccounts<T>(deps: IdentityDeps, work: (changed: (userId: string) => void) => Promise<T>): Promise<T> {
  const changed = new Set<string>();
  try {
    return await work((userId) => changed.add(userId));
  } finally {
    for (const userId of changed) deps.meAnswers.forget(userId);
  }
}

/** A transaction of the tenant that changes one known account or its membership (see changingAccounts). */
export function changeAccount<T>(
  deps: IdentityDeps, tenantId: string, userId: string, work: (tx: DatabaseTransactionConnection) => Promise<T>,
): Promise<T> {
  return withTenant(deps.db, tenantId, work).finally(() => deps.meAnswers.forget(userId));
}
