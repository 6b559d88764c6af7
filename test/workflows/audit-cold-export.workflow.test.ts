import { text } from 'node:stream/consumers';
import { MockActivityEnvironment, type TestWorkflowEnvironment } from '@temporalio/testing';
import { createAuditColdExportActivities } from '../../activities/audit/cold-export.activities';
import { createAuditRetentionActivities } from '../../activities/audit/retention.activities';
import { ANONYMIZE_ACTION } from '../../services/audit/anonymization-mask';
import { coldExportWorkflowId, exportJobId } from '../../services/audit/cold-storage';
import { exportRecord } from '../../services/audit/export-format';
import { newId } from '../../common/ids';
import { upsertAnonymizedUser } from '../../db/queries/audit/audit-anonymization.queries';
import { queueExportJob, selectExportJob } from '../../db/queries/audit/audit-export.queries';
import { withTenant } from '../../db/tenant';
import { coldExportProgressQuery } from '../../workflows/audit/audit.messages';
import { auditColdExport } from '../../workflows/audit/cold-export.workflow';
import { createAuditDatabase, eventually, quietLogger, type AuditDatabase } from '../helpers/audit';
import { auditRecord, createTestBucket, daysAgo, readThroughView, storeAuditRecords, type TestBucket } from '../helpers/audit-export';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';

/**
 * The cold-export workflow under the time-skipping server, against a scratch database whose old
 * months were moved to a bucket of this test by the retention activities: the export restores them,
 * adds the rows still in PostgreSQL, keeps the file for the retention days and then deletes it.
 */
describe('auditColdExport workflow', () => {
  let env: TestWorkflowEnvironment;
  let db: AuditDatabase;
  let bucket: TestBucket;

  jest.setTimeout(60_000);

  beforeAll(async () => {
    [env, db, bucket] = await Promise.all([
      createTimeSkippingEnv(), createAuditDatabase('audit_cold_export'), createTestBucket('test-audit-cold-export'),
    ]);
  });
  afterAll(async () => {
    await env?.teardown();
    await db?.close();
    await bucket?.remove();
  });

  it('restores archived months and hot rows in chain order, keeps the file for the retention days, then deletes it', async () => {
    const [tenantId, otherTenant] = [newId(), newId()];
    const now = await env.currentTimeMs();
    const stored = await storeAuditRecords(db.owner, [
      auditRecord(tenantId, daysAgo(400, now), { action: 'before.range' }),
      auditRecord(tenantId, daysAgo(300, now), { action: 'cold.1' }),
      auditRecord(otherTenant, daysAgo(300, now), { action: 'other.tenant' }),
      auditRecord(tenantId, daysAgo(200, now), { action: 'cold.2', actorUserAgent: '=cmd|\' /C calc\'!A0' }),
      // Replayed late: an old timestamp with a later seq than the record below.
      auditRecord(tenantId, daysAgo(30, now), { action: 'hot.1' }),
      auditRecord(tenantId, daysAgo(250, now), { action: 'cold.late' }),
      auditRecord(tenantId, daysAgo(10, now), { action: 'after.range' }),
    ]);
    const retention = createAuditRetentionActivities({ fleetPool: db.owner, objectStore: bucket, logger: quietLogger() });
    for (const partition of await retention.listArchivablePartitions(daysAgo(90, now).toISOString())) {
      await new MockActivityEnvironment().run(retention.archivePartition, partition);
      expect(await retention.dropArchivedPartition(partition)).toMatchObject({ dropped: true });
    }

    const range = { since: daysAgo(350, now).toISOString(), until: daysAgo(20, now).toISOString() };
    const jobId = exportJobId(tenantId, range, 'json');
    await queueExportJob(db.owner, { tenantId, id: jobId, format: 'json', range, requestedBy: null });
    const taskQueue = uniqueTaskQueue('audit-cold-export');
    const activities = createAuditColdExportActivities({ appPool: db.app, objectStore: bucket, logger: quietLogger() });
    const worker = await createTestWorker(env, { taskQueue, activities });

    const outcome = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(auditColdExport, {
        taskQueue, workflowId: coldExportWorkflowId(tenantId, jobId),
        args: [{ tenantId, jobId, format: 'json', ...range, retentionDays: 7 }],
      });
      await eventually(async () => (await handle.query(coldExportProgressQuery)).phase === 'completed', 'the export file');

      const progress = await handle.query(coldExportProgressQuery);
      const job = await selectExportJob(db.owner, tenantId, jobId);
      expect(job).toMatchObject({ status: 'completed', records: 4, objectKey: `${tenantId}/audit-exports/${jobId}.json` });
      expect(progress).toMatchObject({ phase: 'completed', records: 4, objectKey: job!.objectKey });
      const file = JSON.parse(await text(await bucket.s3.getObject(bucket.bucket, job!.objectKey!))) as { action: string; seq: number }[];
      const expected = stored.filter((record) => record.tenantId === tenantId && ['cold.1', 'cold.2', 'hot.1', 'cold.late'].includes(record.action));
      expect(file.map((record) => record.action)).toEqual(expected.map((record) => record.action));
      expect(file.map((record) => record.action)).toEqual(['cold.1', 'cold.2', 'hot.1', 'cold.late']);
      expect(file.map((record) => record.seq)).toEqual([...file.map((record) => record.seq)].sort((a, b) => a - b));

      // Waiting for the result lets the test server skip the 7 days the file is kept.
      return handle.result();
    });

    expect(outcome).toEqual({ phase: 'expired', records: 4 });
    expect(await bucket.keys(`${tenantId}/audit-exports/`)).toEqual([]);
    expect(await selectExportJob(db.owner, tenantId, jobId)).toMatchObject({ status: 'expired', records: 4 });
  });

  it('returns an anonymized user\'s archived records masked exactly as the hot path shows them', async () => {
    const [tenantId, user, admin] = [newId(), newId(), newId()];
    const now = await env.currentTimeMs();
    await storeAuditRecords(db.owner, [
      auditRecord(tenantId, daysAgo(300, now), { actorId: user, action: 'crm.contact.created', before: null }),
      auditRecord(tenantId, daysAgo(280, now), { actorId: admin, entityType: 'user', entityId: user, meta: { email: 'u@example.com' } }),
      auditRecord(tenantId, daysAgo(260, now), { actorId: admin, impersonatorId: user }),
      auditRecord(tenantId, daysAgo(250, now), { action: 'money.wallet.credited', actorId: admin }),
      auditRecord(tenantId, daysAgo(30, now), { actorId: user }),
      auditRecord(tenantId, daysAgo(1, now), { action: ANONYMIZE_ACTION, actorId: admin, entityType: 'user', entityId: user, meta: { recordsAffected: 4 } }),
    ]);
    await withTenant(db.owner, tenantId, (tx) => upsertAnonymizedUser(tx, tenantId, user, daysAgo(1, now).toISOString(), newId()));
    const range = { since: daysAgo(310, now).toISOString(), until: new Date(now).toISOString() };
    // What the hot path shows, read before the months move to the archive.
    const hotView = (await readThroughView(db.app, tenantId, range)).map(exportRecord);
    expect(hotView.filter((record) => record.actorId === 'anonymized')).toHaveLength(2);

    const retention = createAuditRetentionActivities({ fleetPool: db.owner, objectStore: bucket, logger: quietLogger() });
    for (const partition of await retention.listArchivablePartitions(daysAgo(90, now).toISOString())) {
      await new MockActivityEnvironment().run(retention.archivePartition, partition);
      expect(await retention.dropArchivedPartition(partition)).toMatchObject({ dropped: true });
    }
    const jobId = exportJobId(tenantId, range, 'json');
    await queueExportJob(db.owner, { tenantId, id: jobId, format: 'json', range, requestedBy: null });
    const taskQueue = uniqueTaskQueue('audit-cold-export');
    const activities = createAuditColdExportActivities({ appPool: db.app, objectStore: bucket, logger: quietLogger() });
    const worker = await createTestWorker(env, { taskQueue, activities });

    const file = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(auditColdExport, {
        taskQueue, workflowId: coldExportWorkflowId(tenantId, jobId),
        args: [{ tenantId, jobId, format: 'json', ...range, retentionDays: 7 }],
      });
      await eventually(async () => (await handle.query(coldExportProgressQuery)).phase === 'completed', 'the export file');
      const job = await selectExportJob(db.owner, tenantId, jobId);
      await handle.terminate('test done');
      return JSON.parse(await text(await bucket.s3.getObject(bucket.bucket, job!.objectKey!))) as Record<string, unknown>[];
    });

    expect(file).toEqual(hotView);
    expect(file[0]).toMatchObject({ actorId: 'anonymized', actorIp: null, actorUserAgent: null });
    expect(file[1]).toMatchObject({ actorId: admin, before: { anonymized: true }, after: { anonymized: true }, meta: { anonymized: true } });
    expect(file[2]).toMatchObject({ actorId: admin, impersonatorId: 'anonymized', actorIp: null });
  });

  it('marks the job failed and fails the run when the export cannot be written', async () => {
    const tenantId = newId();
    const range = { since: daysAgo(200).toISOString(), until: daysAgo(100).toISOString() };
    const jobId = exportJobId(tenantId, range, 'csv');
    await queueExportJob(db.owner, { tenantId, id: jobId, format: 'csv', range, requestedBy: null });
    const taskQueue = uniqueTaskQueue('audit-cold-export');
    const activities = createAuditColdExportActivities({
      appPool: db.app, objectStore: { s3: bucket.s3, bucket: `missing-${newId()}` }, logger: quietLogger(),
    });
    const worker = await createTestWorker(env, { taskQueue, activities });

    const failure = await worker.runUntil(env.client.workflow.execute(auditColdExport, {
      taskQueue, workflowId: coldExportWorkflowId(tenantId, jobId), args: [{ tenantId, jobId, format: 'csv', ...range, retentionDays: 7 }],
    })).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(Error);
    expect(await selectExportJob(db.owner, tenantId, jobId)).toMatchObject({ status: 'failed', error: expect.stringMatching(/bucket/i) });
  });
});
