import { z } from 'zod';
import { sql } from '../../../db/pool';
import { listStatement } from '../../../db/queries/data/read.queries';
import { withTenant } from '../../../db/tenant';
import { planList } from '../../../services/data/query/plan';
import { crmTenant, startDataApiStack, type DataApiStack, type DataRecord } from '../../helpers/data-api';
import { call } from '../../helpers/http';

/**
 * A list read down its order's index (issue 16; services/data/query/plan.ts orderIndexServesPage):
 * under row-level security PostgreSQL guesses that a LIKE filter keeps almost nothing and would read
 * and sort every row of the tenant; the data layer discourages sorts for such a page, in the
 * transaction only. 3 000 contacts of one tenant, written by the owner role and analysed, so the
 * planner has the statistics it would have in production.
 */

const ROWS = 3_000;

let stack: DataApiStack;
let tenantId: string;
let token: string;

beforeAll(async () => {
  stack = await startDataApiStack('data-list-plan-test');
  ({ tenantId, token } = await crmTenant(stack));
  // Contact i was created i seconds ago; every third has an e-mail at example.com.
  await withTenant(stack.owner, tenantId, (tx) => tx.query(sql.unsafe`
    INSERT INTO mod_crm.contacts (id, tenant_id, "firstName", "lastName", email, age, created_at, updated_at)
    SELECT gen_random_uuid(), ${tenantId}, 'C' || i, 'Smith', CASE WHEN i % 3 = 0 THEN i || '@example.com' ELSE i || '@example.org' END,
           20 + i % 60, now() - i * interval '1 second', now()
    FROM generate_series(1, ${ROWS}) AS i`));
  await stack.owner.query(sql.unsafe`ANALYZE mod_crm.contacts`);
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

const QUERY = { email: 'like.*@example.com', age: 'gte.30', order: 'createdAt.desc', select: 'firstName,email', page_size: '20' };

interface Page { data: DataRecord[]; next_page_token?: string }

function list(query: Record<string, string>) {
  return call<Page>(`${stack.gateway.baseUrl}/v1/data/crm/contacts?${new URLSearchParams(query).toString()}`, {
    headers: { authorization: `Bearer ${token}` },
  });
}

/** The contacts QUERY matches, newest first: i = 3, 6, 9, … with 20 + i % 60 >= 30. */
const expected = Array.from({ length: ROWS }, (_, index) => index + 1).filter((i) => i % 3 === 0 && 20 + (i % 60) >= 30).map((i) => `C${i}`);

it('the plan of a LIKE list ordered by createdAt walks (tenant_id, created_at, id) backwards and sorts nothing', async () => {
  const { data } = stack.gateway.runtime;
  const plan = planList(data.catalogue.model('crm', 'contacts')!, data.catalogue, QUERY, tenantId);
  expect(plan.readsOrderIndex).toBe(true);
  const lines = await withTenant(data.db, tenantId, (tx) => tx.anyFirst({
    ...listStatement(plan), sql: `EXPLAIN ${listStatement(plan).sql}`, parser: z.object({ 'QUERY PLAN': z.string() }),
  }), { discourageSorts: plan.readsOrderIndex });
  const text = lines.join('\n');
  expect(text).toMatch(/Index Scan Backward using contacts_tenant_id_created_at_id_idx/);
  expect(text).not.toMatch(/Sort/);
});

it('its pages through the route are the matching contacts, newest first, page after page', async () => {
  const first = await list(QUERY);
  expect(first.status).toBe(200);
  expect(first.body.data.map((record) => record.firstName)).toEqual(expected.slice(0, 20));
  const second = await list({ ...QUERY, page_token: first.body.next_page_token! });
  expect(second.status).toBe(200);
  expect(second.body.data.map((record) => record.firstName)).toEqual(expected.slice(20, 40));
});

it('enable_sort is back on every pooled connection after the lists (it is transaction-local)', async () => {
  await Promise.all(Array.from({ length: 8 }, () => list(QUERY)));
  const { reads } = stack.gateway.runtime.data;
  const setting = sql.type(z.object({ value: z.string() }))`SELECT current_setting('enable_sort') AS value`;
  const settings = await Promise.all(Array.from({ length: 8 }, () => reads.rows(tenantId, setting)));
  expect(settings.flat().map((row) => row.value)).toEqual(Array.from({ length: 8 }, () => 'on'));
});
