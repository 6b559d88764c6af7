import { parse } from 'node:querystring';
import { config } from '../../common/config';
import { listStatement } from '../../db/queries/data/read.queries';
import { DataCatalogue } from '../../services/data/catalogue';
import { planList } from '../../services/data/query/plan';
import { loadModuleCatalogue } from '../../services/modules/catalogue';

/**
 * The list of issue 16's performance section: three filters, an order and an embed of companies,
 * a page of 20 contacts. Newest first, the order a client lists records in; the filters keep about
 * 40 % of the rows (age >= 30: 80 %, four of the eight last names: 50 %, every e-mail). Read down
 * the (tenant_id, created_at, id) index a page would need about 50 rows, but PostgreSQL does not
 * choose that plan: under row-level security the planner may not use a column's statistics for an
 * operator that is not leakproof (LIKE), estimates one matching row, and scans the tenant's rows
 * with a top-N sort instead (docs/performance/data.md).
 */
export const BENCH_LIST_QUERY = 'age=gte.30&lastName=in.(Smith,Jones,Garcia,Miller)&email=like.*@example.com'
  + '&order=createdAt.desc&select=id,firstName,lastName,email,age,createdAt,companies(name,country)&page_size=20';

/**
 * The statement our planner makes of BENCH_LIST_QUERY for `tenantId` (parse → plan → SQL, the code
 * GET /data/crm/contacts runs), so the hand-written route and the EXPLAIN run exactly its text, in a
 * transaction with the same settings.
 */
export function benchListStatement(tenantId: string) {
  const cfg = config();
  const catalogue = new DataCatalogue(loadModuleCatalogue(cfg.modules.dir, { maxModels: cfg.data.maxTablesPerModule }));
  const plan = planList(catalogue.model('crm', 'contacts')!, catalogue, parse(BENCH_LIST_QUERY), tenantId);
  return { statement: listStatement(plan), pageSize: plan.pageSize, settings: { discourageSorts: plan.readsOrderIndex } };
}
