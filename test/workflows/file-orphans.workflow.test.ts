import { createFileOrphanActivities } from '../../activities/files/orphans.activities';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { claimReferencedFiles, deleteFileReference, upsertFileReference } from '../../db/queries/files/references.queries';
import { withTenant } from '../../db/tenant';
import { purgeOrphans } from '../../services/files/orphans';
import type { FilesOrphanSweepResult } from '../../workflows/files/orphan-sweep.workflow';
import { filesOrphanSweep } from '../../workflows/files/orphan-sweep.workflow';
import { FILES_ORPHAN_SWEEP_SCHEDULE_ID, filesOrphanSweepSchedule } from '../../workers/schedules';
import { fileRowOf, seedFilesTenant, storageBytesOf, type FilesTenant, type StagedFile } from '../helpers/files-scan';
import { availableFileAt, orphanedAtOf, referenceFile, setOrphanedAt, type OrphanCandidate } from '../helpers/files-orphans';
import { useFilesWorkflowStack } from '../helpers/files-workflows';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';
import { auditRecordsOf } from '../helpers/users';

/**
 * The orphan sweep under the time-skipping server with the real activities (PostgreSQL under the
 * application role, a bucket of this test): each run is started as the Schedule starts it, for this
 * test's tenant only (the shared database holds other tests' files), and 30 days pass in seconds.
 */
jest.setTimeout(180_000);

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const { orphanGraceHours: GRACE_HOURS, orphanRetentionDays: RETENTION_DAYS } = config().files;

const stack = useFilesWorkflowStack('orphans', createTimeSkippingEnv);

/**
 * One run of the sweep for one tenant, as the Schedule starts it (its settings), in pages of 2 files,
 * on the day `at`. The run's clock is pinned through `asOf` (the input continueAsNew carries it in):
 * the sweep has no timer of its own, its days are the Schedule's, and between two runs the test
 * server's clock jumps to whatever timeout it holds next (ten years after a first run, found here).
 */
async function sweep({ tenantId }: FilesTenant, at: number): Promise<FilesOrphanSweepResult> {
  const { args } = filesOrphanSweepSchedule({ files: config().files }).action;
  const taskQueue = uniqueTaskQueue('files-orphans');
  const worker = await createTestWorker(stack.temporal, { taskQueue, activities: createFileOrphanActivities({ appPool: stack.app, fleetPool: stack.owner, objectStore: stack.bucket }) });
  return worker.runUntil(stack.temporal.client.workflow.execute(filesOrphanSweep, {
    taskQueue, workflowId: `files.orphan-sweep:test-${newId()}`, args: [{ ...args[0], batchSize: 2, tenantId, asOf: new Date(at).toISOString() }],
  }));
}

const objectsOf = (file: StagedFile) => stack.bucket.keys(`${file.tenantId}/`).then((keys) => keys.filter((key) => key.includes(file.fileId)));
const orphanAuditOf = async (file: StagedFile) => (await auditRecordsOf(stack.owner, file.tenantId, 'files.orphan.deleted'))
  .filter((record) => record.entityId === file.fileId);

describe('filesOrphanSweep workflow', () => {
  it('marks a file unreferenced past the grace and purges it after the retention; referenced, young and assets files survive', async () => {
    const tenant = await seedFilesTenant(stack.owner);
    const now = Date.now();
    const old = now - 2 * DAY;
    const orphan = await availableFileAt(stack.owner, stack.bucket, tenant.tenantId, 'documents', old);
    const avatar = await availableFileAt(stack.owner, stack.bucket, tenant.tenantId, 'avatars', old);
    const referenced = await availableFileAt(stack.owner, stack.bucket, tenant.tenantId, 'documents', old);
    const young = await availableFileAt(stack.owner, stack.bucket, tenant.tenantId, 'documents', now - (GRACE_HOURS - 1) * HOUR);
    const asset = await availableFileAt(stack.owner, stack.bucket, tenant.tenantId, 'assets', old);
    await referenceFile(stack.app, referenced, 'data:lab.things.attachment', newId());
    const storage = await storageBytesOf(stack.owner, tenant.tenantId);

    const first = await sweep(tenant, now);
    expect(first).toMatchObject({ tenants: 1, marked: 2, purged: 0 });
    const markedAt = new Date(now).toISOString();
    expect(await orphanedAtOf(stack.owner, orphan)).toBe(markedAt);
    expect(await orphanedAtOf(stack.owner, avatar)).toBe(markedAt);
    for (const kept of [referenced, young, asset]) expect(await orphanedAtOf(stack.owner, kept)).toBeNull();

    // A second run the same day changes nothing: the marks stay those of the first.
    expect(await sweep(tenant, now + HOUR)).toMatchObject({ marked: 0, purged: 0 });
    expect(await orphanedAtOf(stack.owner, orphan)).toBe(markedAt);
    // A day short of the retention: nothing purged; the young file, past its grace now, is marked.
    expect(await sweep(tenant, now + (RETENTION_DAYS - 1) * DAY)).toMatchObject({ marked: 1, purged: 0 });

    const second = await sweep(tenant, now + RETENTION_DAYS * DAY);

    expect(second).toMatchObject({ purged: 2, marked: 0 });
    for (const purged of [orphan, avatar]) {
      expect((await fileRowOf(stack.owner, purged)).status).toBe('purged');
      expect(await objectsOf(purged)).toEqual([]);
      expect(await orphanAuditOf(purged)).toEqual([expect.objectContaining({
        entityType: 'file', actorId: null, after: expect.objectContaining({ status: 'purged' }), meta: expect.objectContaining({ retentionDays: RETENTION_DAYS }),
      })]);
    }
    expect(await storageBytesOf(stack.owner, tenant.tenantId)).toBe(storage - orphan.size - avatar.size);
    // The young file waits for a retention from its own mark.
    expect((await fileRowOf(stack.owner, young)).status).toBe('available');
    expect(await orphanedAtOf(stack.owner, young)).not.toBeNull();
    for (const kept of [referenced, asset]) {
      expect((await fileRowOf(stack.owner, kept)).status).toBe('available');
      expect(await orphanedAtOf(stack.owner, kept)).toBeNull();
      expect(await objectsOf(kept)).toHaveLength(2);
    }
  });

  it('spares a marked file referenced again, clears its mark, and counts its retention anew once the reference is gone', async () => {
    const tenant = await seedFilesTenant(stack.owner);
    const now = Date.now();
    const file: OrphanCandidate = await availableFileAt(stack.owner, stack.bucket, tenant.tenantId, 'documents', now - 2 * DAY);
    expect(await sweep(tenant, now)).toMatchObject({ marked: 1 });
    expect(await orphanedAtOf(stack.owner, file)).not.toBeNull();

    // A reference written by the data layer clears the mark in its own transaction.
    const recordId = newId();
    const reference = { tenantId: tenant.tenantId, referrer: 'data:lab.things.attachment', referrerId: recordId };
    await referenceFile(stack.app, file, reference.referrer, recordId);
    // A mark left behind on a referenced file (a write that raced the marking) is cleared by the review.
    expect(await orphanedAtOf(stack.owner, file)).toBeNull();
    await setOrphanedAt(stack.owner, file, now);
    expect(await sweep(tenant, now + RETENTION_DAYS * DAY)).toMatchObject({ cleared: 1, purged: 0 });
    expect(await orphanedAtOf(stack.owner, file)).toBeNull();

    // Unreferenced again: marked by the next run, not purged by it.
    await withTenant(stack.app, tenant.tenantId, (tx) => deleteFileReference(tx, reference));
    expect(await sweep(tenant, now + (RETENTION_DAYS + 1) * DAY)).toMatchObject({ marked: 1, purged: 0 });
    expect((await fileRowOf(stack.owner, file)).status).toBe('available');
    expect(await orphanAuditOf(file)).toEqual([]);
  });

  it('is started daily by the Schedule files.orphan-sweep on the files task queue with FILES_ORPHAN_* settings', () => {
    const schedule = filesOrphanSweepSchedule({ files: { orphanGraceHours: 24, orphanRetentionDays: 30, taskQueue: 'platform.files' } });
    expect(schedule).toMatchObject({
      scheduleId: FILES_ORPHAN_SWEEP_SCHEDULE_ID,
      spec: { calendars: [{ hour: 3, minute: 15 }] },
      action: { workflowType: 'filesOrphanSweep', taskQueue: 'platform.files', args: [{ graceHours: 24, retentionDays: 30 }] },
    });
  });
});

describe('the purge step (services/files/orphans.ts purgeOrphans)', () => {
  const deps = () => ({ appPool: stack.app, objectStore: stack.bucket });
  const runAt = (at: number) => ({ asOf: new Date(at).toISOString(), graceHours: GRACE_HOURS, retentionDays: RETENTION_DAYS, batchSize: 10 });

  it('repeated with the same ids removes the objects of the files it purged again and purges nothing twice', async () => {
    const tenant = await seedFilesTenant(stack.owner);
    const now = Date.now();
    const file = await availableFileAt(stack.owner, stack.bucket, tenant.tenantId, 'documents', now - 40 * DAY);
    await setOrphanedAt(stack.owner, file, now - RETENTION_DAYS * DAY);
    expect(await purgeOrphans(deps(), tenant.tenantId, runAt(now), [file.fileId], () => undefined)).toEqual({ purged: 1 });
    // As if the removal had failed after the commit: an object is back, the activity is retried.
    await stack.bucket.s3.putObject(stack.bucket.bucket, (await fileRowOf(stack.owner, file)).objectKey!, Buffer.from('left'));
    expect(await purgeOrphans(deps(), tenant.tenantId, runAt(now), [file.fileId], () => undefined)).toEqual({ purged: 0 });
    expect(await objectsOf(file)).toEqual([]);
    expect(await orphanAuditOf(file)).toHaveLength(1);
  });

  it('never purges a file a write referenced meanwhile: the purge waits for the write\'s row lock and finds the mark cleared', async () => {
    const tenant = await seedFilesTenant(stack.owner);
    const now = Date.now();
    const file = await availableFileAt(stack.owner, stack.bucket, tenant.tenantId, 'documents', now - 40 * DAY);
    await setOrphanedAt(stack.owner, file, now - RETENTION_DAYS * DAY);
    let commit!: () => void;
    const held = new Promise<void>((resolve) => { commit = resolve; });
    let claimed!: () => void;
    const claiming = new Promise<void>((resolve) => { claimed = resolve; });
    const write = withTenant(stack.app, tenant.tenantId, async (tx) => {
      await claimReferencedFiles(tx, tenant.tenantId, [file.fileId]);
      await upsertFileReference(tx, { tenantId: tenant.tenantId, referrer: 'data:lab.things.attachment', referrerId: newId() }, file.fileId);
      claimed();
      await held;
    });
    await claiming;
    const purge = purgeOrphans(deps(), tenant.tenantId, runAt(now), [file.fileId], () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    commit();
    await write;
    expect(await purge).toEqual({ purged: 0 });
    expect((await fileRowOf(stack.owner, file)).status).toBe('available');
    expect(await orphanedAtOf(stack.owner, file)).toBeNull();
  });
});

describe('the tenants a fleet-wide run visits (orphanSweepTenants, the owner role)', () => {
  it('lists, page by page in id order, the tenants with available files in a swept bucket, and not those with assets only', async () => {
    const now = Date.now();
    const [swept, assetsOnly] = [await seedFilesTenant(stack.owner), await seedFilesTenant(stack.owner)];
    await availableFileAt(stack.owner, stack.bucket, swept.tenantId, 'avatars', now);
    await availableFileAt(stack.owner, stack.bucket, assetsOnly.tenantId, 'assets', now);
    const activities = createFileOrphanActivities({ appPool: stack.app, fleetPool: stack.owner, objectStore: stack.bucket });

    const seen: string[] = [];
    for (let after: string | null = null; ;) {
      const page = await activities.orphanSweepTenants(after, 500);
      seen.push(...page);
      if (page.length < 500) break;
      after = page[page.length - 1];
    }
    expect(seen).toContain(swept.tenantId);
    expect(seen).not.toContain(assetsOnly.tenantId);
    expect([...seen].sort()).toEqual(seen);
    expect(new Set(seen).size).toBe(seen.length);
  });
});
