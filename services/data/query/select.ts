import type { CommonQueryMethods } from 'slonik';
import { selectRecordPage, type DataRecord } from '../../../db/queries/data/read.queries';
import type { ReadPlan } from '../../../db/queries/data/read-plan';
import { encodeDataPageToken } from './page-token';

/**
 * One page of a list plan (planList): its records and, when more follow, the token of the next
 * page, bound to the plan's query. Run it inside withTenant(db, plan.tenantId, ...).
 */
export async function selectRecords(tx: CommonQueryMethods, plan: ReadPlan): Promise<{ rows: DataRecord[]; nextPageToken?: string }> {
  const { rows, nextKeys } = await selectRecordPage(tx, plan);
  return nextKeys ? { rows, nextPageToken: encodeDataPageToken(plan.queryHash, nextKeys) } : { rows };
}
