import { sql, type DatabasePool, type DatabaseTransactionConnection } from './pool';
import { isUuid } from '../common/ids';

/**
 * The settings a tenant transaction starts with, in one statement (one round trip): app.tenant_id
 * and, for a read under a query budget, statement_timeout. Both transaction-local
 * (set_config(..., true), SET LOCAL), so neither can leak to the next user of a pooled connection.
 */
export function tenantSettingsStatement(tenantId: string, options: TenantOptions = {}) {
  return options.statementTimeoutMs === undefined
    ? sql.unsafe`SELECT set_config('app.tenant_id', ${tenantId}, true)`
    : sql.unsafe`SELECT set_config('app.tenant_id', ${tenantId}, true), set_config('statement_timeout', ${`${options.statementTimeoutMs}ms`}, true)`;
}

export interface TenantOptions {
  /** statement_timeout of every statement of the transaction (the data layer's query budget). */
  statementTimeoutMs?: number;
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
