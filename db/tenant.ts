import { sql, type DatabasePool, type DatabaseTransactionConnection } from './pool';
import { isUuid } from '../common/ids';

/**
 * The settings a tenant transaction starts with, in one statement (one round trip): app.tenant_id
 * and, when asked, statement_timeout and enable_sort. All transaction-local (set_config(..., true),
 * SET LOCAL), so none can leak to the next user of a pooled connection.
 */
export function tenantSettingsStatement(tenantId: string, options: TenantOptions = {}) {
  const settings = [sql.fragment`set_config('app.tenant_id', ${tenantId}, true)`];
  if (options.statementTimeoutMs !== undefined) settings.push(sql.fragment`set_config('statement_timeout', ${`${options.statementTimeoutMs}ms`}, true)`);
  if (options.discourageSorts) settings.push(sql.fragment`set_config('enable_sort', 'off', true)`);
  return sql.unsafe`SELECT ${sql.join(settings, sql.fragment`, `)}`;
}

export interface TenantOptions {
  /** statement_timeout of every statement of the transaction (the data layer's query budget). */
  statementTimeoutMs?: number;
  /**
   * enable_sort off for the transaction: the planner then reads an index in the order asked for
   * wherever one serves it. Only for a caller that knows such an index reads no more rows than any
   * other plan (the data layer's lists, ReadPlan.readsOrderIndex).
   */
  discourageSorts?: boolean;
}

/**
 * The only place that sets app.tenant_id. Callers pass the tenant id of the verified token; the
 * setting is transaction-local, and row-level security filters every statement of the transaction by it.
 */
export function withTenant<T>(
  pool: DatabasePool,
  tenantId: string,
  work: (tx: DatabaseTransactionConnection) => Promise<T>,
  options: TenantOptions = {},
): Promise<T> {
  if (!isUuid(tenantId)) throw new Error('withTenant needs the tenant id of a verified token');
  return pool.transaction(async (tx) => {
    await tx.query(tenantSettingsStatement(tenantId, options));
    return work(tx);
  });
}
