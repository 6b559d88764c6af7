import type { CommonQueryMethods } from 'slonik';
import { problems } from '../../../common/problems';
import type { DatabasePool } from '../../../db/pool';
import {
  isStatementTimeout, selectRecordPage, type DataRecord,
} from '../../../db/queries/data/read.queries';
import type { ReadPlan } from '../../../db/queries/data/read-plan';
import { withTenant, type TenantOptions } from '../../../db/tenant';
import { encodeDataPageToken } from './page-token';

/**
 * One page of a list plan (planList): its records and, when more follow, the token of the next
 * page, bound to the plan's query; with `count` (Prefer: count=exact), the total the filters match.
 * Run it inside readWithinBudget(…, plan.tenantId, …).
 */
export async function selectRecords(
  tx: CommonQueryMethods, plan: ReadPlan, options: { count?: boolean } = {},
): Promise<{ rows: DataRecord[]; nextPageToken?: string; total?: number }> {
  const { nextKeys, ...page } = await selectRecordPage(tx, plan, options);
  return nextKeys ? { ...page, nextPageToken: encodeDataPageToken(plan.queryHash, nextKeys) } : page;
}

/**
 * A read of the data layer in the tenant's transaction under its query budget (issue 16):
 * statement_timeout is set for the transaction only (SET LOCAL), below the gateway's downstream
 * deadline, so a query the client made too heavy is cancelled by PostgreSQL, freeing its
 * connection, instead of running on after the gateway has answered 504. Past the budget the answer
 * is that same 504 gateway-timeout; the cancelled transaction is rolled back and the connection
 * goes back to the pool clean.
 */
export async function readWithinBudget<T>(
  db: DatabasePool, tenantId: string, timeoutMs: number, work: (tx: CommonQueryMethods) => Promise<T>, options: Omit<TenantOptions, 'statementTimeoutMs'> = {},
): Promise<T> {
  try {
    return await withTenant(db, tenantId, work, { ...options, statementTimeoutMs: timeoutMs });
  } catch (error) {
    if (isStatementTimeout(error)) {
      throw problems.timeout(`The query ran past its ${timeoutMs} ms budget; narrow its filters or ask for fewer records or relations`);
    }
    throw error;
  }
}
