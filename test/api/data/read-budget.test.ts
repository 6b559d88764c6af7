import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { sql } from '../../../db/pool';
import { startDataApiStack, type DataApiStack } from '../../helpers/data-api';
import { registerAccount } from '../../helpers/identity';
import { installModule } from '../../helpers/modules';
import { send } from '../../helpers/rbac';

/**
 * The query budget of data reads (issue 16): a read past DATA_STATEMENT_TIMEOUT_MS is cancelled by
 * PostgreSQL and answered 504 gateway-timeout, and the connection goes back clean.
 *
 * How a read is made slow, honestly: an owner connection holds ACCESS EXCLUSIVE on the table (what
 * a migration's ALTER TABLE holds), so the read waits for the lock, and statement_timeout counts the
 * wait. No test-only path in the service, no pg_sleep; the lock lasts only while the request runs
 * (about twice the budget: the gateway retries a failed GET once). The table is `budgetlab`'s, a
 * module of this test: a lock on a shared module table (crm's) would make every other file's reads
 * of it wait too, and time out.
 *
 * The budget holds for every read of this stack, so it leaves the reads that should succeed room on
 * a busy machine. Not a whole number of seconds: PostgreSQL shows it as `2500ms`, which the check of
 * the connections' own timeout below looks for.
 */

const BUDGET_MS = 2500;

let stack: DataApiStack;
let modulesDir: string;

const budgetlab = {
  slug: 'budgetlab', name: 'Budget lab', version: '1.0.0', description: 'test fixture: a table only the read budget test locks',
  models: { items: { autoApi: true, fields: { name: { type: 'text', nullable: false } } } },
};

beforeAll(async () => {
  modulesDir = mkdtempSync(join(tmpdir(), 'modules-budgetlab-'));
  mkdirSync(join(modulesDir, 'budgetlab'));
  writeFileSync(join(modulesDir, 'budgetlab', 'manifest.json'), JSON.stringify(budgetlab));
  stack = await startDataApiStack('data-read-budget-test', { MODULES_DIR: modulesDir, DATA_STATEMENT_TIMEOUT_MS: String(BUDGET_MS) });
});

afterAll(async () => {
  await stack?.close();
  rmSync(modulesDir, { recursive: true, force: true });
});

it('takes the lower of DATA_STATEMENT_TIMEOUT_MS and the gateway deadline', () => {
  expect(stack.gateway.runtime.data.readTimeoutMs).toBe(Math.min(BUDGET_MS, stack.gateway.config.api.downstreamTimeoutMs));
});

it('a read past its budget is 504 gateway-timeout; the connection is clean after', async () => {
  const account = await registerAccount(stack.gateway);
  expect((await installModule(stack.gateway, account.accessToken, 'budgetlab')).status).toBe(201);
  const { accessToken: token, tenant: { id: tenantId } } = account;
  const item = await send<{ id: string }>(stack.gateway, 'POST', '/data/budgetlab/items', token, { name: 'Ada' });
  expect(item.status).toBe(201);

  const [list, one] = await stack.owner.transaction(async (tx) => {
    await tx.query(sql.unsafe`LOCK TABLE mod_budgetlab.items IN ACCESS EXCLUSIVE MODE`);
    return Promise.all([
      send(stack.gateway, 'GET', '/data/budgetlab/items', token),
      send(stack.gateway, 'GET', `/data/budgetlab/items/${item.body.id}`, token),
    ]);
  });
  for (const answer of [list, one]) {
    expect({ status: answer.status, type: (answer.body as { type?: string }).type }).toEqual({ status: 504, type: stack.gateway.problemType('gateway-timeout') });
  }

  // SET LOCAL ended with the cancelled transaction: the pool's connections keep their own timeout.
  const setting = sql.type(z.object({ value: z.string() }))`SELECT current_setting('statement_timeout') AS value`;
  const timeouts = await Promise.all(Array.from({ length: 4 }, () => stack.gateway.runtime.data.reads.rows(tenantId, setting)));
  expect(timeouts.flat().map((row) => row.value)).not.toContain(`${BUDGET_MS}ms`);
  const after = await send<{ data: unknown[] }>(stack.gateway, 'GET', '/data/budgetlab/items', token);
  expect(after.status).toBe(200);
  expect(after.body.data).toHaveLength(1);
});
