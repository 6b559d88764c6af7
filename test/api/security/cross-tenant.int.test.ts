import Joi from 'joi';
import { z } from 'zod';
import { defineRoute } from '../../../api/http/route-registry';
import { walletIdParams } from '../../../api/routes/money/wallets.schemas';
import { problems } from '../../../common/problems';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { describeCall, runCrossTenant, type RunReport } from '../../helpers/cross-tenant/run';

/**
 * Issue 36, item 3 (docs/cross-tenant.md): every operation of the OpenAPI documents that takes an id
 * in its path or body is called by tenant B, whose owner holds every permission, with each of tenant
 * A's real ids of the slot's kind; `npm run fuzz:tenants` is the long variant (every kind in every
 * slot, with a table). The seeding's money, scans and audit records run on the platform's workers
 * (`npm run up`), as in test/api/tour.int.test.ts.
 */
jest.setTimeout(240_000);

let gateway: TestGateway;
let owner: DatabasePool;
let report: RunReport;

/**
 * A route written wrong on purpose, served beside the platform's by this test's gateway only: it
 * looks a wallet up by id alone, on the owner's pool that row-level security does not filter. The
 * run must find it in the documents with no code written for it, and flag each of its calls.
 */
const LEAKY_PATH = '/gateway/leaky-wallets/{id}';
const leakyRoute = defineRoute({
  namespace: 'gateway', method: 'GET', path: '/gateway/leaky-wallets/:id', operationId: 'test.leakyWallet',
  summary: 'Deliberately unscoped wallet lookup (cross-tenant test only)', auth: 'bearer',
  schemas: { params: walletIdParams, response: { 200: Joi.object({ id: Joi.string(), tenantId: Joi.string() }) } },
  async handler(ctx) {
    const row = await owner.maybeOne(sql.type(z.object({ id: z.string(), tenantId: z.string() }))`
      SELECT id, tenant_id::text AS "tenantId" FROM wallets WHERE id = ${ctx.guard.params.id}
    `);
    if (!row) throw problems.notFound('wallet');
    ctx.body = row;
  },
});

beforeAll(async () => {
  await migrateSharedDatabase();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 4, name: 'cross-tenant-test' });
  gateway = await startTestGateway({ waitUntilReady: true, routes: [leakyRoute] });
  report = await runCrossTenant(gateway, owner);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), owner?.end()]);
});

describe('tenant B with tenant A\'s ids', () => {
  it('finds the operations with ids in the documents, every kind of id among them', () => {
    // The platform has over 80 such operations; a document that stops serving them fails here.
    expect(report.operations.length).toBeGreaterThan(80);
    const triedKinds = new Set(report.calls.map((call) => call.kind));
    expect([...triedKinds].sort()).toEqual(Object.keys(report.tenants.a.ids).sort());
  });

  it('answers every call as it answers an id that exists nowhere: 404, or 403 before any lookup, nothing of A\'s', () => {
    const violations = report.calls.filter((call) => call.outcome === 'violation' && call.operation.path !== LEAKY_PATH).map(describeCall);
    expect(violations).toEqual([]);
  });

  it('flags the deliberately leaky route, found in the documents like any other', () => {
    const leaky = report.calls.filter((call) => call.operation.path === LEAKY_PATH);
    expect(leaky.map((call) => [call.kind, call.status, call.controlStatus, call.outcome])).toEqual([['wallet', 200, 404, 'violation']]);
    expect(leaky[0].note).toContain(report.tenants.a.tenantId);
  });

  it('changes none of A\'s rows', () => {
    expect(report.changedTables).toEqual([]);
  });
});
