import { z } from 'zod';
import { sql, type DatabasePool, type DatabaseTransactionConnection } from '../../pool';

const countRow = z.object({ count: z.number() });

/** Holds of a wallet still held (on the partial index money_transactions_open_holds). */
export async function countOpenHolds(tx: DatabaseTransactionConnection, tenantId: string, walletId: string): Promise<number> {
  return tx.oneFirst(sql.type(countRow)`
    SELECT count(*)::int AS count FROM money_transactions
    WHERE tenant_id = ${tenantId} AND wallet_id = ${walletId} AND status = 'held'
  `);
}

const overdueHold = z.object({ id: z.string(), tenantId: z.string() });
export type OverdueHold = z.infer<typeof overdueHold>;

/**
 * Holds of every tenant still held more than graceSeconds past their expiry (the sweep's safety
 * net; a live hold workflow expires its hold at expiresAt itself). Each hold is then expired in its
 * own tenant's transaction on the application role.
 */
export function selectOverdueHolds(fleet: DatabasePool, graceSeconds: number, limit: number): Promise<readonly OverdueHold[]> {
  // Fleet pool (owner role): the hold sweep looks for overdue holds of every tenant at once.
  return fleet.any(sql.type(overdueHold)`
    SELECT id, tenant_id AS "tenantId" FROM money_transactions
    WHERE status = 'held' AND expires_at < now() - make_interval(secs => ${graceSeconds})
    ORDER BY expires_at
    LIMIT ${limit}
  `);
}
