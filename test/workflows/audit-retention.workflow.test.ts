import { createGunzip } from 'node:zlib';
import { text } from 'node:stream/consumers';
import { pipeline } from 'node:stream';
import { MockActivityEnvironment, type TestWorkflowEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createAuditRetentionActivities } from '../../activities/audit/retention.activities';
import { checkLink, GENESIS_HASH } from '../../services/audit/chain';
import type { ArchivedRecord, ColdManifest } from '../../services/audit/cold-storage';
import { newId } from '../../common/ids';
import { sql } from '../../db/pool';
import { auditRetention } from '../../workflows/audit/retention.workflow';
import { createAuditDatabase, quietLogger, type AuditDatabase } from '../helpers/audit';
import { auditRecord, createTestBucket, daysAgo, storeAuditRecords, type TestBucket } from '../helpers/audit-export';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';

/**
 * The retention workflow against a scratch database (it drops partitions, which no shared database
 * may see) and a bucket of its own, under the time-skipping server.
 */
describe('auditRetention workflow', () => {
  let env: TestWorkflowEnvironment;
  let db: AuditDatabase;
  let bucket: TestBucket;

  jest.setTimeout(60_000);

  beforeAll(async () => {
    [env, db, bucket] = await Promise.all([createTimeSkippingEnv(), createAuditDatabase('audit_retention'), createTestBucket('test-audit-retention')]);
  });
  afterAll(async () => {
    await env?.teardown();
    await db?.close();
    await bucket?.remove();
  });

  const partitionsOf = async () => [...await db.owner.anyFirst(sql.type(z.object({ name: z.string() }))`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'audit_records'::regclass ORDER BY 1
  `)];

  async function readObject(key: string): Promise<string> {
    return text(pipeline(await bucket.s3.getObject(bucket.bucket, key), createGunzip(), () => undefined));
  }

  it('moves whole months older than the hot days to gzip NDJSON objects with manifests, drops them, and is idempotent', async () => {
    const [tenantA, tenantB] = [newId(), newId()];
    const now = await env.currentTimeMs();
    const month = (iso: string) => `audit_records_${iso.slice(0, 7).replace('-', '_')}`;
    const old = daysAgo(150, now);
    const older = daysAgo(400, now);
    const recent = daysAgo(5, now);
    const stored = await storeAuditRecords(db.owner, [
      auditRecord(tenantA, older, { action: 'a.ancient' }),
      auditRecord(tenantA, old, { action: 'a.old.1' }),
      auditRecord(tenantB, old, { action: 'b.old' }),
      auditRecord(tenantA, old, { action: 'a.old.2', meta: { note: 'ü, "quoted"' } }),
      auditRecord(tenantA, recent, { action: 'a.recent' }),
    ]);
    const taskQueue = uniqueTaskQueue('audit-retention');
    const activities = createAuditRetentionActivities({ fleetPool: db.owner, objectStore: bucket, logger: quietLogger() });
    const worker = await createTestWorker(env, { taskQueue, activities });
    const run = () => env.client.workflow.execute(auditRetention, {
      taskQueue, workflowId: `audit.retention:test-${newId()}`, args: [{ hotDays: 90, coldYears: 7 }],
    });

    const result = await worker.runUntil(run());

    expect(result.partitionsDropped).toEqual(expect.arrayContaining([month(older.toISOString()), month(old.toISOString())]));
    expect(result.partitionsDeferred).toEqual([]);
    const partitions = await partitionsOf();
    expect(partitions).not.toContain(month(old.toISOString()));
    expect(partitions).not.toContain(month(older.toISOString()));
    expect(partitions).toContain(month(recent.toISOString()));

    // Tenant A's month of `old`: its two records, every column, in seq order, with a manifest.
    const keys = await bucket.keys(`${tenantA}/audit/${old.toISOString().slice(0, 7)}/`);
    expect(keys.map((key) => key.replace(/^.*\//, ''))).toEqual(expect.arrayContaining([
      expect.stringMatching(/^\d+-\d+\.ndjson\.gz$/), expect.stringMatching(/^\d+-\d+\.manifest\.json$/),
    ]));
    const objectKey = keys.find((key) => key.endsWith('.ndjson.gz'))!;
    const lines = (await readObject(objectKey)).trim().split('\n').map((line) => JSON.parse(line) as ArchivedRecord);
    const expected = stored.filter((record) => record.tenantId === tenantA && record.action.startsWith('a.old'));
    expect(lines.map(({ storedAt: _storedAt, ...record }) => record)).toEqual(expected);
    const manifest = JSON.parse(await text(await bucket.s3.getObject(bucket.bucket, keys.find((key) => key.endsWith('.manifest.json'))!))) as ColdManifest;
    expect(manifest).toMatchObject({ tenantId: tenantA, records: 2, object: objectKey, encoding: 'ndjson+gzip', chainHeadAtExport: { seq: 4 } });

    // The archived records still verify against their chain: the first of A from genesis, the rest link by link.
    const chainA = stored.filter((record) => record.tenantId === tenantA);
    let previous = { seq: 0, hash: GENESIS_HASH };
    for (const record of chainA) {
      expect(checkLink(previous, record)).toBeNull();
      previous = record;
    }

    // Run again with the same cutoff (the test server's clock jumps once a run has ended, so the
    // activities are called directly): nothing is listed, and a repeated drop is a no-op.
    const listed = await activities.listArchivablePartitions(daysAgo(90, now).toISOString());
    expect(listed.map((p) => p.name)).not.toEqual(expect.arrayContaining([month(old.toISOString())]));
    const oldPartition = { name: month(old.toISOString()), month: `${old.toISOString().slice(0, 7)}-01` };
    expect(await activities.dropArchivedPartition(oldPartition)).toEqual({ dropped: true, objects: 0 });
    expect(await bucket.keys(`${tenantA}/audit/${old.toISOString().slice(0, 7)}/`)).toEqual(keys);
  });

  it('resumes after a crash between upload and drop, replacing the object when records arrived in the month meanwhile', async () => {
    const tenantId = newId();
    const now = await env.currentTimeMs();
    const when = daysAgo(200, now);
    await storeAuditRecords(db.owner, [auditRecord(tenantId, when), auditRecord(tenantId, when)]);
    const activities = createAuditRetentionActivities({ fleetPool: db.owner, objectStore: bucket, logger: quietLogger() });
    const [partition] = (await activities.listArchivablePartitions(daysAgo(90, now).toISOString()))
      .filter((p) => p.month === `${when.toISOString().slice(0, 7)}-01`);
    // The "crashed" attempt: uploaded, never dropped.
    expect(await new MockActivityEnvironment().run(activities.archivePartition, partition)).toMatchObject({ uploaded: 1 });
    // A record replayed late into the same month, after the upload.
    await storeAuditRecords(db.owner, [auditRecord(tenantId, when, { action: 'late.arrival' })]);

    const taskQueue = uniqueTaskQueue('audit-retention');
    const worker = await createTestWorker(env, { taskQueue, activities });
    const result = await worker.runUntil(env.client.workflow.execute(auditRetention, {
      taskQueue, workflowId: `audit.retention:test-${newId()}`, args: [{ hotDays: 90, coldYears: 7 }],
    }));

    expect(result.partitionsDropped).toContain(partition.name);
    const keys = await bucket.keys(`${tenantId}/audit/`);
    // The stale object of the first attempt was replaced by one holding all three records.
    expect(keys).toEqual([`${tenantId}/audit/${when.toISOString().slice(0, 7)}/1-3.manifest.json`, `${tenantId}/audit/${when.toISOString().slice(0, 7)}/1-3.ndjson.gz`]);
    expect((await readObject(keys[1])).trim().split('\n')).toHaveLength(3);
  });

  it('deletes cold objects after the cold years, keeping the catalogue row as evidence', async () => {
    const tenantId = newId();
    const ancient = daysAgo(8 * 366, await env.currentTimeMs());
    await storeAuditRecords(db.owner, [auditRecord(tenantId, ancient)]);
    const taskQueue = uniqueTaskQueue('audit-retention');
    const activities = createAuditRetentionActivities({ fleetPool: db.owner, objectStore: bucket, logger: quietLogger() });
    const worker = await createTestWorker(env, { taskQueue, activities });

    const result = await worker.runUntil(env.client.workflow.execute(auditRetention, {
      taskQueue, workflowId: `audit.retention:test-${newId()}`, args: [{ hotDays: 90, coldYears: 7 }],
    }));

    // Other tests' months may have aged past the limit too on the test server's clock.
    expect(result.coldObjectsDeleted).toBeGreaterThanOrEqual(1);
    expect(await bucket.keys(`${tenantId}/`)).toEqual([]);
    const states = await db.owner.anyFirst(sql.type(z.object({ state: z.string() }))`
      SELECT state FROM audit_cold_objects WHERE tenant_id = ${tenantId}
    `);
    expect(states).toEqual(['deleted']);
  });
});
