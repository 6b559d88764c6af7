import { setTimeout as sleep } from 'node:timers/promises';
import { config, type Config } from '../../common/config';
import { newId } from '../../common/ids';
import { problems } from '../../common/problems';
import {
  acquireAnonymizationLock, hasLiveAnonymizationLock, releaseAnonymizationLock,
} from '../../db/queries/audit/audit-anonymization.queries';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';

/**
 * The anonymization lock of docs/reference/audit.md#rule-15 (Limits: 60 s; readers poll every 100 ms for up
 * to 5 s), kept in PostgreSQL (audit_anonymization_locks, migration 0008). One lock per tenant and
 * user: a second anonymization of the same user while it is held is 409 anonymize-conflict. Readers
 * of the tenant (queries, exports) wait while any lock of their tenant is live, so a read started
 * during an anonymization already shows its result.
 */

export interface AnonymizationTiming {
  lockSeconds: number;
  pollMs: number;
  maxWaitMs: number;
}

export function anonymizationTiming(settings: Readonly<Config> = config()): AnonymizationTiming {
  const { anonymizeLockSeconds, anonymizePollMs, anonymizeWaitMs } = settings.audit;
  return { lockSeconds: anonymizeLockSeconds, pollMs: anonymizePollMs, maxWaitMs: anonymizeWaitMs };
}

/**
 * Runs `work` holding the user's lock. The lock row is committed before the work starts (others
 * must see it) and deleted afterwards whatever happened; a crashed holder's lock expires after
 * lockSeconds and is then taken over.
 */
export async function withAnonymizationLock<T>(
  db: DatabasePool, tenantId: string, userId: string, lockSeconds: number, work: () => Promise<T>,
): Promise<T> {
  const token = newId();
  const acquired = await withTenant(db, tenantId, (tx) => acquireAnonymizationLock(tx, tenantId, userId, token, lockSeconds));
  if (!acquired) throw problems.anonymizeConflict(userId);
  try {
    return await work();
  } finally {
    await withTenant(db, tenantId, (tx) => releaseAnonymizationLock(tx, tenantId, userId, token));
  }
}

/**
 * Runs a read of the tenant's audit records once no anonymization of the tenant is in progress:
 * the lock check is the first statement of the read's own transaction, so a reader that finds
 * none pays one statement. While a lock is live it polls every pollMs, for at most maxWaitMs;
 * at the deadline it reads anyway (`settled: false`), which is safe because an anonymization
 * takes effect atomically at its commit, but may miss the masking of the one still in progress.
 * `db` may be the read-only reporting pool.
 */
export async function readAfterAnonymizations<T>(
  db: DatabasePool, tenantId: string, work: (tx: DatabaseTransactionConnection) => Promise<T>,
  timing: AnonymizationTiming = anonymizationTiming(),
): Promise<{ settled: boolean; value: T }> {
  const deadline = Date.now() + timing.maxWaitMs;
  for (;;) {
    const outcome = await withTenant(db, tenantId, async (tx) => {
      const pending = await hasLiveAnonymizationLock(tx, tenantId);
      if (pending && Date.now() + timing.pollMs <= deadline) return undefined;
      return { settled: !pending, value: await work(tx) };
    });
    if (outcome) return outcome;
    await sleep(timing.pollMs);
  }
}

/**
 * What a reader that reads elsewhere (a streamed export) calls first: returns true at once when
 * no anonymization of the tenant is in progress, otherwise polls as above and returns true once
 * none is, or false when a lock was still held after maxWaitMs.
 */
export async function awaitPendingAnonymizations(
  db: DatabasePool, tenantId: string, timing: AnonymizationTiming = anonymizationTiming(),
): Promise<boolean> {
  return (await readAfterAnonymizations(db, tenantId, () => Promise.resolve(undefined), timing)).settled;
}
