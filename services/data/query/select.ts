import { problems } from '../../../common/problems';
import { isStatementTimeout, selectRecordPage, type DataRecord } from '../../../db/queries/data/read.queries';
import type { ReadPlan } from '../../../db/queries/data/read-plan';
import type { TenantOptions } from '../../../db/tenant';
import type { StatementRows, TenantReader } from '../../../db/tenant-reads';
import { encodeDataPageToken } from './page-token';

/**
 * One page of a list plan (planList): its records and, when more follow, the token of the next
 * page, bound to the plan's query; with `count` (Prefer: count=exact), the total the filters match.
 * `read` is readsWithinBudget(…, plan.tenantId, …) or a transaction of that tenant (rowsIn).
 */
export async function selectRecords(
  read: StatementRows, plan: ReadPlan, options: { count?: boolean } = {},
): Promise<{ rows: DataRecord[]; nextPageToken?: string; total?: number }> {
  const { nextKeys, ...page } = await selectRecordPage(read, plan, options);
  // The next page starts after this one's rows: its offset, for its Content-Range (page-token.ts).
  return nextKeys ? { ...page, nextPageToken: encodeDataPageToken(plan.queryHash, nextKeys, (plan.pageStart ?? 0) + page.rows.length) } : page;
}

/**
 * The reads of the data layer as the tenant, under its query budget (issue 16): each in its own
 * transaction, in one round trip (TenantReader), with statement_timeout set for that transaction
 * only, below the gateway's downstream deadline, so a query the client made too heavy is cancelled
 * by PostgreSQL, freeing its connection, instead of running on after the gateway has answered 504.
 * Past the budget the answer is that same 504 gateway-timeout; the cancelled transaction is rolled
 * back and the connection goes back to the pool clean.
 */
export function readsWithinBudget(
  reads: TenantReader, tenantId: string, timeoutMs: number, options: Omit<TenantOptions, 'statementTimeoutMs'> = {},
): StatementRows {
  const read = reads.reading(tenantId, { ...options, statementTimeoutMs: timeoutMs });
  return async (statement) => {
    try {
      return await read(statement);
    } catch (error) {
      if (isStatementTimeout(error)) {
        throw problems.timeout(`The query ran past its ${timeoutMs} ms budget; narrow its filters or ask for fewer records or relations`);
      }
      throw error;
    }
  };
}
