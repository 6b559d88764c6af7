import { WorkflowNotFoundError } from '@temporalio/client';
import { createFileScanActivities } from '../../activities/files/scan.activities';
import { createFileStagingSweepActivities } from '../../activities/files/staging-sweep.activities';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { sql } from '../../db/pool';
import { FileScanStarter, fileScanSettingsOf } from '../../services/files/scan-client';
import { createClamdScanner } from '../../services/files/scanner';
import { startStrandedScans, type StagingSweepPage } from '../../services/files/staging-sweep';
import { fileScanWorkflowId } from '../../workflows/files/files.messages';
import type { fileScan } from '../../workflows/files/scan.workflow';
import { filesStagingSweep, type FilesStagingSweepResult } from '../../workflows/files/staging-sweep.workflow';
import { FILES_STAGING_SWEEP_SCHEDULE_ID, filesStagingSweepSchedule } from '../../workers/schedules';
import { storageUsageOf } from '../helpers/files';
import { fileRowOf, samplePng, seedFilesTenant, stageFile, type FilesTenant, type StagedFile } from '../helpers/files-scan';
import { useFilesWorkflowStack } from '../helpers/files-workflows';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';
import { auditRecordsOf } from '../helpers/users';

/**
 * The staging sweep (services/files/staging-sweep.ts, workflows/files/staging-sweep.workflow.ts)
 * under the time-skipping server with the real activities: a file is left as a gateway killed
 * between recording it and starting its scan leaves it (a pending_scan row, its staged object, no
 * workflow), the sweep is run as its Schedule starts it (for this test's tenants only: the shared
 * database holds other tests' files), and the real scan (the local clamd) takes the file to its end.
 */
jest.setTimeout(180_000);

const MINUTE = 60_000;
const logger = createLogger('file-staging-sweep-test', 'silent');
const { stagingSweepGraceMinutes: GRACE_MINUTES } = config().files;

const stack = useFilesWorkflowStack('staging-sweep', createTimeSkippingEnv);

/** The scan's activities and the sweep's, as the files worker has them. */
const activities = () => ({
  ...createFileScanActivities({ appPool: stack.app, objectStore: stack.bucket, scanner: createClamdScanner(config().clamav), logger }),
  ...createFileStagingSweepActivities({ fleetPool: stack.owner, appPool: stack.app, logger }),
});

/** The Schedule's arguments, with the scans started on this test's queue. */
function scheduledInput(taskQueue: string) {
  const [input] = filesStagingSweepSchedule({ cfg: config() }).action.args;
  return { ...input, scan: { ...input.scan, taskQueue, notifyTaskQueue: taskQueue } };
}

/** Moves the file's created_at `ago` ms back, as if its upload had been recorded then. */
async function recordedAgo(file: StagedFile, ago: number): Promise<void> {
  await stack.owner.query(sql.unsafe`
    UPDATE files SET created_at = date_trunc('milliseconds', now()) - make_interval(secs => ${ago / 1000}) WHERE id = ${file.fileId}
  `);
}

/** A file left by a gateway killed after recordStagedFile and before startScan: row and staged object, no workflow. */
async function strandedPng(tenant: FilesTenant, ago = 10 * MINUTE): Promise<StagedFile> {
  const file = await stageFile(stack.owner, stack.bucket, tenant.tenantId, {
    mimeType: 'image/png', originalName: 'stranded.png', content: await samplePng(64, 48), uploadedBy: tenant.member.id,
  });
  await recordedAgo(file, ago);
  return file;
}

const scanHandleOf = (file: StagedFile) => stack.temporal.client.workflow.getHandle<typeof fileScan>(fileScanWorkflowId(file.fileId));

/** The file's scan workflow, or null when it has none. */
async function scanOf(file: StagedFile): Promise<{ runId: string; status: string } | null> {
  try {
    const { runId, status } = await scanHandleOf(file).describe();
    return { runId, status: status.name };
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return null;
    throw error;
  }
}

const objectsOf = (file: StagedFile) => stack.bucket.keys(`${file.tenantId}/`).then((keys) => keys.filter((key) => key.includes(file.fileId)));

describe('filesStagingSweep workflow', () => {
  it('starts the scan of a file its upload never handed over, which ends available; a second sweep starts nothing', async () => {
    const tenant = await seedFilesTenant(stack.owner);
    const file = await strandedPng(tenant);
    const storage = await storageUsageOf(stack.owner, tenant.tenantId);
    const taskQueue = uniqueTaskQueue('files-staging-sweep');
    const worker = await createTestWorker(stack.temporal, { taskQueue, activities: activities() });
    const sweep = (): Promise<FilesStagingSweepResult> => stack.temporal.client.workflow.execute(filesStagingSweep, {
      taskQueue, workflowId: `${FILES_STAGING_SWEEP_SCHEDULE_ID}:test-${newId()}`,
      args: [{ ...scheduledInput(taskQueue), tenantId: tenant.tenantId, asOf: new Date().toISOString() }],
    });

    await worker.runUntil(async () => {
      expect(await scanOf(file)).toBeNull();
      expect(await sweep()).toEqual({ inspected: 1, started: 1, running: 0, closed: 0, next: null });
      // The gateway's scan, under the gateway's workflow id, labelled with the file's tenant.
      expect(await scanHandleOf(file).result()).toEqual({ status: 'available' });
      expect((await scanHandleOf(file).describe()).memo).toEqual({ tenantId: tenant.tenantId });

      expect(await sweep()).toEqual({ inspected: 0, started: 0, running: 0, closed: 0, next: null });
    });

    const row = await fileRowOf(stack.owner, file);
    expect(row).toMatchObject({ status: 'available', rejectedReason: null, objectKey: expect.any(String) });
    // Out of staging: the original and its thumbnails are all there is; its bytes stay counted as storage.
    expect(await objectsOf(file)).not.toContain(file.stagingKey);
    expect(await objectsOf(file)).toContain(row.objectKey);
    expect(await storageUsageOf(stack.owner, tenant.tenantId)).toBe(storage);
    expect((await auditRecordsOf(stack.owner, tenant.tenantId, 'files.file.uploaded')).filter((record) => record.entityId === file.fileId))
      .toEqual([expect.objectContaining({ actorId: tenant.member.id, after: expect.objectContaining({ status: 'available' }) })]);
  });

  it('is started every FILES_STAGING_SWEEP_MINUTES by the Schedule files.staging-sweep with the gateway\'s scan settings', () => {
    const cfg = config();
    const schedule = filesStagingSweepSchedule({ cfg });
    expect(schedule).toMatchObject({
      scheduleId: FILES_STAGING_SWEEP_SCHEDULE_ID,
      spec: { intervals: [{ every: `${cfg.files.stagingSweepMinutes} minutes` }] },
      action: {
        workflowType: 'filesStagingSweep', taskQueue: cfg.files.taskQueue,
        args: [{ graceMinutes: GRACE_MINUTES, scan: { taskQueue: cfg.files.taskQueue, ...fileScanSettingsOf(cfg) } }],
      },
    });
    expect(GRACE_MINUTES).toBeGreaterThanOrEqual(5);
  });
});

describe('a page of the sweep (services/files/staging-sweep.ts startStrandedScans)', () => {
  const deps = () => ({ fleetPool: stack.owner, appPool: stack.app, logger });

  function page(tenant: FilesTenant, taskQueue: string, overrides: Partial<StagingSweepPage> = {}): StagingSweepPage {
    return {
      createdBefore: new Date(Date.now() - GRACE_MINUTES * MINUTE).toISOString(), after: null, limit: 10, tenantId: tenant.tenantId,
      scan: scheduledInput(taskQueue).scan, ...overrides,
    };
  }

  it('leaves alone a file within the grace, one whose presigned PUT has not come, and one whose scan has closed', async () => {
    const tenant = await seedFilesTenant(stack.owner);
    const taskQueue = uniqueTaskQueue('files-staging-sweep');
    const starter = new FileScanStarter(stack.temporal.client, taskQueue, { ...fileScanSettingsOf(config()), notifyTaskQueue: taskQueue });
    const worker = await createTestWorker(stack.temporal, { taskQueue, activities: activities() });

    // Recorded a minute ago: its upload may still be about to start its scan.
    const young = await strandedPng(tenant, MINUTE);
    // A file whose scan completed, and which is pending again (set back by hand): never scanned twice.
    const scanned = await strandedPng(tenant, 15 * MINUTE);
    await worker.runUntil(async () => {
      await starter.start({ tenantId: tenant.tenantId, fileId: scanned.fileId, sizeBytes: scanned.sizeBytes });
      expect(await scanHandleOf(scanned).result()).toEqual({ status: 'available' });
    });
    await stack.owner.query(sql.unsafe`UPDATE files SET status = 'pending_scan' WHERE id = ${scanned.fileId}`);
    // A presigned upload recorded long ago whose PUT has not come: its scan waits for it.
    const waiting = await stageFile(stack.owner, stack.bucket, tenant.tenantId, { mimeType: 'application/pdf', sizeBytes: 4096 });
    await recordedAgo(waiting, 20 * MINUTE);
    await starter.start({ tenantId: tenant.tenantId, fileId: waiting.fileId, sizeBytes: waiting.sizeBytes, staged: false, uploadTtlMs: 24 * 60 * MINUTE });
    const before = { waiting: await scanOf(waiting), scanned: await scanOf(scanned) };
    expect(before).toEqual({ waiting: { runId: expect.any(String), status: 'RUNNING' }, scanned: { runId: expect.any(String), status: 'COMPLETED' } });

    // Pages of one file, oldest first: the waiting one, then the scanned one, then the end.
    const sweepPage = (overrides: Partial<StagingSweepPage>) => startStrandedScans(
      deps(), stack.temporal.client, page(tenant, taskQueue, overrides), newId(), () => undefined,
    );
    const first = await sweepPage({ limit: 1 });
    expect(first).toEqual({ inspected: 1, started: 0, running: 1, closed: 0, next: { createdAt: expect.any(String), id: waiting.fileId } });
    const second = await sweepPage({ limit: 1, after: first.next });
    expect(second).toEqual({ inspected: 1, started: 0, running: 0, closed: 1, next: { createdAt: expect.any(String), id: scanned.fileId } });
    expect(await sweepPage({ limit: 1, after: second.next })).toEqual({ inspected: 0, started: 0, running: 0, closed: 0, next: null });

    // Nothing was started, nor started again.
    expect(await scanOf(young)).toBeNull();
    expect({ waiting: await scanOf(waiting), scanned: await scanOf(scanned) }).toEqual(before);
    expect((await fileRowOf(stack.owner, young)).status).toBe('pending_scan');
    expect((await fileRowOf(stack.owner, waiting)).status).toBe('pending_scan');

    // Once its grace is over, the young file's scan is started, and a repeated page finds it running.
    const later = { createdBefore: new Date(Date.now() + MINUTE).toISOString() };
    expect(await sweepPage(later)).toEqual({ inspected: 3, started: 1, running: 1, closed: 1, next: null });
    expect(await sweepPage(later)).toEqual({ inspected: 3, started: 0, running: 2, closed: 1, next: null });
    expect((await scanOf(waiting))?.runId).toBe(before.waiting?.runId);
    await scanHandleOf(waiting).terminate('the test is over');
    // A worker runs once: another takes the young file's scan to its end.
    const again = await createTestWorker(stack.temporal, { taskQueue, activities: activities() });
    await again.runUntil(async () => {
      expect(await scanHandleOf(young).result()).toEqual({ status: 'available' });
    });
  });

  it('looks at no other tenant\'s files when a run is for one tenant', async () => {
    const [mine, other] = [await seedFilesTenant(stack.owner), await seedFilesTenant(stack.owner)];
    const taskQueue = uniqueTaskQueue('files-staging-sweep');
    const theirs = await strandedPng(other);
    expect(await startStrandedScans(deps(), stack.temporal.client, page(mine, taskQueue), newId(), () => undefined))
      .toEqual({ inspected: 0, started: 0, running: 0, closed: 0, next: null });
    expect(await scanOf(theirs)).toBeNull();
  });
});
