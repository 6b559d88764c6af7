import { sql, type DatabasePool, type DatabaseTransactionConnection } from './pool';
import { isUuid } from '../common/ids';

/**
 * The only place that sets app.tenant_id. Callers pass the tenant id of the verified token; the
 * setting is transaction-local (set_config(..., true)), so it can never leak to the next user of a
 * pooled connection, and row-level security filters every statement of the transaction by it.
 */
export function withTenant<T>(
  pool: DatabasePool,
  tenantId: string,
  work: (tx: DatabaseTransactionConnection) => Promise<T>,
): Promise<T> {
  if (!isUuid(tenantId)) throw new Error('withTenant needs the tenant id of a verified token');
  return pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`SELECT set_config('app.tenant_id', ${tenantId}, true)`);
    return work(tx);
  });
}
