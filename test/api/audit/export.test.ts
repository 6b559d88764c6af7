import type { Worker } from '@temporalio/worker';
import { createAuditColdExportActivities } from '../../../activities/audit/cold-export.activities';
import { coldExportWorkflowId } from '../../../services/audit/cold-storage';
import { exportJobIdOf } from '../../../services/audit/export/job';
import { EXPORT_COLUMNS } from '../../../services/audit/export-format';
import type { ChainedRecord } from '../../../services/audit/chain';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { auditRecord, createTestBucket, daysAgo, parseCsv, storeAuditRecords, type TestBucket } from '../../helpers/audit-export';
import { quietLogger } from '../../helpers/audit';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { call, waitFor } from '../../helpers/http';
import { bearer, get, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { connectDevServer, createTestWorker, platformBundle, uniqueTaskQueue, type DevServer } from '../../helpers/temporal';

/**
 * GET /audit/export through the real gateway: hot exports stream from PostgreSQL, cold ranges
 * start the cold-export workflow (run here by a worker of this test on the dev server, on a task
 * queue of its own) and are followed with GET /audit/export/:jobId to a presigned download.
 */
describe('GET /audit/export', () => {
  let gateway: TestGateway;
  let owner: DatabasePool;
  let app: DatabasePool;
  let bucket: TestBucket;
  let server: DevServer;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = uniqueTaskQueue('audit-export');
  let account: RegisteredAccount;
  let other: RegisteredAccount;
  /** Account's records within the hot range, in seq order, and the range that selects them. */
  let inRange: ChainedRecord[];
  let since: Date;
  let until: Date;

  const exportUrl = (query: Record<string, string>) => `${gateway.baseUrl}/v1/audit/export?${new URLSearchParams(query).toString()}`;

  beforeAll(async () => {
    // The workflow bundle first: webpack fails to load under Jest once the gateway's modules are loaded.
    await Promise.all([migrateSharedDatabase(), platformBundle()]);
    bucket = await createTestBucket('test-audit-export');
    [gateway, owner, app, server] = await Promise.all([
      startTestGateway({ env: { AUDIT_TASK_QUEUE: taskQueue, S3_BUCKET: bucket.bucket }, waitUntilReady: true }),
      createDbPool(ownerUrl(), { name: 'test-audit-export', maxPoolSize: 4 }),
      createDbPool(appUrl(), { name: 'test-audit-export-app', maxPoolSize: 4 }),
      connectDevServer(),
    ]);
    worker = await createTestWorker(server, {
      taskQueue,
      activities: createAuditColdExportActivities({ appPool: app, objectStore: bucket, logger: quietLogger() }),
    });
    running = worker.run();
    [account, other] = await Promise.all([registerAccount(gateway), registerAccount(gateway)]);

    const now = Date.now();
    since = daysAgo(10, now);
    until = daysAgo(2, now);
    const tenantId = account.tenant.id;
    const stored = await storeAuditRecords(owner, [
      auditRecord(tenantId, daysAgo(11, now)),
      auditRecord(tenantId, since, { action: 'range.since.included' }),
      auditRecord(tenantId, daysAgo(5, now), {
        entityId: '=HYPERLINK("http://evil.example")', actorUserAgent: 'Agent, "quoted"\nsecond line', meta: { note: '+1, "x"' },
      }),
      auditRecord(tenantId, daysAgo(3, now), { before: null, after: { emoji: 'ü€😀' } }),
      auditRecord(tenantId, until, { action: 'range.until.excluded' }),
      auditRecord(other.tenant.id, daysAgo(4, now), { action: 'other.tenant.record' }),
    ]);
    inRange = stored.filter((record) => record.tenantId === tenantId && record.timestamp >= since.toISOString()
      && record.timestamp < until.toISOString());
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await Promise.all([gateway?.close(), owner?.end(), app?.end(), server?.close()]);
    await bucket?.remove();
  });

  it('streams a JSON array of the tenant\'s records in [since, until), in chain order, as an attachment', async () => {
    const response = await fetch(exportUrl({ format: 'json', since: since.toISOString(), until: until.toISOString() }), {
      headers: bearer(account.accessToken),
    });

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('content-disposition'))
      .toMatch(/^attachment; filename="audit-\d{8}T\d{6}Z-\d{8}T\d{6}Z\.json"$/);
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    const records = await response.json() as Record<string, unknown>[];
    expect(records.map((record) => record.id)).toEqual(inRange.map((record) => record.id));
    expect(records.map((record) => record.action)).toContain('range.since.included');
    expect(records.map((record) => record.action)).not.toContain('range.until.excluded');
    expect(records.every((record) => record.tenantId === account.tenant.id)).toBe(true);
    expect(Object.keys(records[0])).toEqual([...EXPORT_COLUMNS]);
    expect(records.find((record) => (record.after as { emoji?: string } | null)?.emoji)?.after).toEqual({ emoji: 'ü€😀' });
  });

  it('streams CSV with a header, RFC 4180 quoting and formula cells neutralized', async () => {
    const response = await fetch(exportUrl({ format: 'csv', since: since.toISOString(), until: until.toISOString() }), {
      headers: bearer(account.accessToken),
    });

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toMatch(/filename="audit-.*\.csv"$/);
    const [header, ...rows] = parseCsv(await response.text());
    expect(header).toEqual([...EXPORT_COLUMNS]);
    expect(rows.map((row) => row[0])).toEqual(inRange.map((record) => record.id));
    const column = (name: (typeof EXPORT_COLUMNS)[number]) => EXPORT_COLUMNS.indexOf(name);
    const tricky = rows.find((row) => row[column('entityId')].includes('HYPERLINK'))!;
    expect(tricky[column('entityId')]).toBe('\'=HYPERLINK("http://evil.example")');
    expect(tricky[column('actorUserAgent')]).toBe('Agent, "quoted"\nsecond line');
    expect(JSON.parse(tricky[column('meta')])).toEqual({ note: '+1, "x"' });
    expect(tricky[column('seq')]).toMatch(/^\d+$/);
  });

  it('gives an empty export for a range without records', async () => {
    const response = await fetch(exportUrl({ since: daysAgo(30).toISOString(), until: daysAgo(29).toISOString() }), {
      headers: bearer(account.accessToken),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
  });

  it('refuses a hot range over 90 days with 400 export-range-too-large', async () => {
    const response = await call(exportUrl({ since: daysAgo(10).toISOString(), until: daysAgo(-85).toISOString() }), {
      headers: bearer(account.accessToken),
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ type: gateway.problemType('export-range-too-large'), maxDays: 90 });
  });

  it.each([
    ['until before since', { since: daysAgo(1).toISOString(), until: daysAgo(2).toISOString() }, 'until'],
    ['since missing', { until: daysAgo(2).toISOString() }, 'since'],
    ['an unknown format', { format: 'xml', since: daysAgo(3).toISOString(), until: daysAgo(2).toISOString() }, 'format'],
  ])('refuses %s with 400 validation-error', async (_case, query, field) => {
    const response = await call<{ errors: { field: string }[] }>(exportUrl(query), { headers: bearer(account.accessToken) });
    expect(response.status).toBe(400);
    expect(response.body.errors.map((error) => error.field)).toContain(field);
  });

  it('needs a bearer token', async () => {
    const response = await call(exportUrl({ since: since.toISOString(), until: until.toISOString() }));
    expect(response.status).toBe(401);
  });

  it('answers a range reaching cold storage with 202 {jobId}, the same job when asked again, and a download when done', async () => {
    const tenantId = account.tenant.id;
    const old = await storeAuditRecords(owner, [
      auditRecord(tenantId, daysAgo(200), { action: 'cold.first' }),
      auditRecord(tenantId, daysAgo(150), { action: 'cold.second' }),
      auditRecord(other.tenant.id, daysAgo(150), { action: 'cold.other.tenant' }),
    ]);
    const query = { format: 'csv', since: daysAgo(365).toISOString(), until: daysAgo(100).toISOString() };

    const first = await call<{ jobId: string; status: string; code: string; statusUrl: string }>(exportUrl(query), {
      headers: bearer(account.accessToken),
    });
    const again = await call<{ jobId: string }>(exportUrl(query), { headers: bearer(account.accessToken) });

    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ status: 'queued', code: 'cold-export-initiated' });
    expect(first.headers.get('location')).toBe(`/v1/jobs/${first.body.jobId}`);
    expect(first.body.statusUrl).toBe(`/v1/audit/export/${first.body.jobId}`);
    expect(again.body.jobId).toBe(first.body.jobId);
    const { jobId } = first.body;

    let status: Record<string, unknown> = {};
    await waitFor('the cold export to complete', async () => {
      status = (await get(gateway, `/audit/export/${jobId}`, account.accessToken)).body;
      return status.status === 'completed';
    });
    expect(status).toMatchObject({ jobId, format: 'csv', records: 2 });
    const download = await fetch(status.downloadUrl as string);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename="audit-.*\.csv"$/);
    const [, ...rows] = parseCsv(await download.text());
    expect(rows.map((row) => row[0])).toEqual(old.filter((record) => record.tenantId === tenantId).map((record) => record.id));

    // Another tenant cannot see the job; the workflow keeps the file for 7 days, so it is still running.
    expect((await get(gateway, `/audit/export/${jobId}`, other.accessToken)).status).toBe(404);
    const handle = server.client.workflow.getHandle(coldExportWorkflowId(tenantId, exportJobIdOf(jobId)));
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.terminate('test finished');
  }, 60_000);

  it('answers an unknown job with 404', async () => {
    const response = await get(gateway, `/audit/export/${'0'.repeat(32)}`, account.accessToken);
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ type: gateway.problemType('not-found') });
  });

  it('keeps each tenant to its own records', async () => {
    const response = await fetch(exportUrl({ since: since.toISOString(), until: until.toISOString() }), {
      headers: bearer(other.accessToken),
    });
    const records = await response.json() as Record<string, unknown>[];
    expect(records.map((record) => record.action)).toEqual(['other.tenant.record']);
  });
});
