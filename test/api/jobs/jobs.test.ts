import { ApplicationFailure } from '@temporalio/common';
import type { Worker } from '@temporalio/worker';
import { createAuditColdExportActivities, type ColdExportJob } from '../../../activities/audit/cold-export.activities';
import { coldExportWorkflowId } from '../../../services/audit/cold-storage';
import { exportJobIdOf } from '../../../services/audit/export/job';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { auditRecord, createTestBucket, daysAgo, parseCsv, storeAuditRecords, type TestBucket } from '../../helpers/audit-export';
import { quietLogger } from '../../helpers/audit';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { call, waitFor, type JsonResponse } from '../../helpers/http';
import { bearer, get, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { addMember, type Member } from '../../helpers/rbac';
import { connectDevServer, createTestWorker, platformBundle, uniqueTaskQueue, type DevServer } from '../../helpers/temporal';

interface Accepted {
  jobId: string;
  statusUrl: string;
}

interface Job {
  jobId: string;
  kind: string;
  status: string;
  startedAt: string;
  completedAt: string | null;
  result?: Record<string, unknown>;
  error?: Record<string, unknown>;
}

/** What the restore activity says when it breaks for a tenant of `breaking`: it must never reach a client. */
const INTERNAL_REASON = 'disk /var/lib/secret-volume is full';

/**
 * GET /v1/jobs/{jobId} through the real gateway, with a cold audit export as the job: its 202 names
 * the job in Location, and the job is read from the export's workflow on the Temporal dev server,
 * run by a worker of this test on a task queue of its own (started only once a job has been seen
 * running, so the running state is observed for sure).
 */
describe('GET /v1/jobs/:jobId', () => {
  let gateway: TestGateway;
  let owner: DatabasePool;
  let app: DatabasePool;
  let bucket: TestBucket;
  let server: DevServer;
  let worker: Worker;
  let running: Promise<void> | undefined;
  const taskQueue = uniqueTaskQueue('jobs');
  /** Tenants whose restore breaks, to see a failed job. */
  const breaking = new Set<string>();
  let account: RegisteredAccount;
  let other: RegisteredAccount;
  let member: Member;

  const startWorker = () => { running ??= worker.run(); };
  const coldExport = (token: string, query: Record<string, string>) =>
    call<Accepted>(`${gateway.baseUrl}/v1/audit/export?${new URLSearchParams(query).toString()}`, { headers: bearer(token) });
  const job = (jobId: string, token: string) => get<Job>(gateway, `/jobs/${jobId}`, token);
  const waitForStatus = async (jobId: string, token: string, status: string): Promise<JsonResponse<Job>> => {
    let seen: JsonResponse<Job> | undefined;
    await waitFor(`job ${jobId} to be ${status}`, async () => {
      seen = await job(jobId, token);
      return seen.body.status === status;
    });
    return seen!;
  };
  const terminate = (tenantId: string, jobId: string) =>
    server.client.workflow.getHandle(coldExportWorkflowId(tenantId, exportJobIdOf(jobId))).terminate('test finished');

  beforeAll(async () => {
    // The workflow bundle first: webpack fails to load under Jest once the gateway's modules are loaded.
    await Promise.all([migrateSharedDatabase(), platformBundle()]);
    bucket = await createTestBucket('test-jobs');
    [gateway, owner, app, server] = await Promise.all([
      startTestGateway({ env: { AUDIT_TASK_QUEUE: taskQueue, S3_BUCKET: bucket.bucket }, waitUntilReady: true }),
      createDbPool(ownerUrl(), { name: 'test-jobs', maxPoolSize: 4 }),
      createDbPool(appUrl(), { name: 'test-jobs-app', maxPoolSize: 4 }),
      connectDevServer(),
    ]);
    const activities = createAuditColdExportActivities({ appPool: app, objectStore: bucket, logger: quietLogger() });
    worker = await createTestWorker(server, {
      taskQueue,
      activities: {
        ...activities,
        async writeColdExport(job: ColdExportJob) {
          if (breaking.has(job.tenantId)) throw ApplicationFailure.nonRetryable(INTERNAL_REASON, 'DiskFull');
          return activities.writeColdExport(job);
        },
      },
    });
    [account, other] = await Promise.all([registerAccount(gateway), registerAccount(gateway)]);
    member = await addMember(gateway, owner, account.tenant.id);
  });

  afterAll(async () => {
    if (worker) {
      startWorker();
      worker.shutdown();
      await running;
    }
    await Promise.all([gateway?.close(), owner?.end(), app?.end(), server?.close()]);
    await bucket?.remove();
  });

  it('follows a cold export from its 202 (Location) through running to completed with its file', async () => {
    const tenantId = account.tenant.id;
    const stored = await storeAuditRecords(owner, [
      auditRecord(tenantId, daysAgo(200), { action: 'cold.first' }),
      auditRecord(tenantId, daysAgo(150), { action: 'cold.second' }),
      auditRecord(other.tenant.id, daysAgo(150), { action: 'cold.other.tenant' }),
    ]);

    const accepted = await coldExport(account.accessToken, {
      format: 'csv', since: daysAgo(365).toISOString(), until: daysAgo(100).toISOString(),
    });
    expect(accepted.status).toBe(202);
    const { jobId } = accepted.body;
    expect(jobId).toMatch(/^audit-cold-export\.[0-9a-f]{32}$/);
    expect(accepted.headers.get('location')).toBe(`/v1/jobs/${jobId}`);

    // No worker polls the queue yet: the workflow has started and waits for it.
    const first = await job(jobId, account.accessToken);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      jobId, kind: 'audit-cold-export', status: 'running', startedAt: expect.any(String), completedAt: null,
    });

    startWorker();
    const done = await waitForStatus(jobId, account.accessToken, 'completed');
    expect(done.body).toMatchObject({ jobId, kind: 'audit-cold-export', startedAt: first.body.startedAt });
    expect(Date.parse(done.body.completedAt!)).toBeGreaterThanOrEqual(Date.parse(first.body.startedAt));
    expect(done.body.result).toMatchObject({ format: 'csv', records: 2, expired: false, downloadUrl: expect.any(String) });
    expect(done.body).not.toHaveProperty('error');
    const download = await fetch(done.body.result!.downloadUrl as string);
    const [, ...rows] = parseCsv(await download.text());
    expect(rows.map((row) => row[0])).toEqual(stored.filter((record) => record.tenantId === tenantId).map((record) => record.id));

    // The audit route follows the same job, by the id the 202 answered or the bare id it answered before.
    const legacy = await get(gateway, accepted.body.statusUrl.replace(/^\/v1/, ''), account.accessToken);
    expect(legacy.body).toMatchObject({ jobId, status: 'completed', records: 2 });
    expect((await get(gateway, `/audit/export/${exportJobIdOf(jobId)}`, account.accessToken)).body).toMatchObject({ jobId });

    // Another tenant's token names the workflow of its own tenant, which does not exist.
    const foreign = await job(jobId, other.accessToken);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ type: gateway.problemType('not-found') });

    await terminate(tenantId, jobId);
    const stopped = await job(jobId, account.accessToken);
    expect(stopped.body).toMatchObject({ status: 'canceled', completedAt: expect.any(String) });
    expect(stopped.body).not.toHaveProperty('result');
  }, 60_000);

  it('shows a failed job\'s error as a problem, without the workflow\'s own message', async () => {
    const breakingAccount = await registerAccount(gateway);
    breaking.add(breakingAccount.tenant.id);
    startWorker();

    const accepted = await coldExport(breakingAccount.accessToken, { since: daysAgo(400).toISOString(), until: daysAgo(300).toISOString() });
    expect(accepted.status).toBe(202);
    const failed = await waitForStatus(accepted.body.jobId, breakingAccount.accessToken, 'failed');

    expect(failed.body.completedAt).toEqual(expect.any(String));
    expect(failed.body.error).toEqual({
      type: gateway.problemType('internal-error'), title: 'Internal error', status: 500,
      detail: 'The cold export did not complete; start it again', instance: `/v1/jobs/${accepted.body.jobId}`,
      traceId: expect.any(String),
    });
    expect(JSON.stringify(failed.body)).not.toContain('secret-volume');
  }, 60_000);

  it('needs the permission of the job\'s kind (audit.export): 403 for a member without it', async () => {
    const response = await job(`audit-cold-export.${'a'.repeat(32)}`, member.token);
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ type: gateway.problemType('forbidden') });
  });

  it.each([
    ['an id of a kind that does not exist', `no-such-kind.${'a'.repeat(32)}`],
    ['an id its kind never issues', 'audit-cold-export.not-hex'],
    ['an unknown job', `audit-cold-export.${'0'.repeat(32)}`],
  ])('answers %s with 404 not-found', async (_case, jobId) => {
    const response = await job(jobId, account.accessToken);
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ type: gateway.problemType('not-found') });
  });

  // Job ids are opaque to clients: an id of a shape no kind issues is an unknown job, not a malformed request.
  it.each([
    ['no kind', 'a'.repeat(32)], ['an empty id part', 'audit-cold-export.'], ['characters of no id', 'audit-cold-export.a%20b'],
    ['a UUID', '0190a5f2-1c3b-7d4e-8f5a-6b7c8d9e0f1a'], ['an overlong id', `audit-cold-export.${'a'.repeat(500)}`],
  ])('answers a job id with %s with 404 not-found', async (_case, jobId) => {
    const response = await job(jobId, account.accessToken);
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ type: gateway.problemType('not-found') });
  });

  it('needs a bearer token', async () => {
    expect((await get(gateway, `/jobs/audit-cold-export.${'0'.repeat(32)}`)).status).toBe(401);
  });
});
