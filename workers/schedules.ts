import {
  ScheduleAlreadyRunning, ScheduleOverlapPolicy,
  type Client, type ScheduleOptions, type ScheduleOptionsStartWorkflowAction,
} from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import type { Config } from '../common/config';
import { withPlatformSearchAttributes } from '../common/temporal/search-attributes';
import { taskQueues } from '../common/temporal/task-queues';
import type { expireStaleRecords } from '../workflows/maintenance/expire-stale-records.workflow';
import type { auditRetention } from '../workflows/audit/retention.workflow';
import type { usageSnapshot } from '../workflows/billing/usage-snapshot.workflow';
import type { moneyHoldSweep } from '../workflows/money/hold-sweep.workflow';
import type { webhookRedelivery } from '../workflows/billing/webhook-redelivery.workflow';
import type { filesOrphanSweep } from '../workflows/files/orphan-sweep.workflow';
import type { filesStagingSweep } from '../workflows/files/staging-sweep.workflow';
import type { fileRescanCheck } from '../workflows/files/rescan.workflow';
import { subscriptionTarget } from '../services/billing/subscription-signal';
import { fileScanSettingsOf } from '../services/files/scan-client';

export const EXPIRE_STALE_RECORDS_SCHEDULE_ID = 'maintenance.expire-stale-records';

type StartWorkflow<W extends Workflow> = ScheduleOptions<ScheduleOptionsStartWorkflowAction<W>>;

export interface ExpireStaleRecordsScheduleSettings {
  intervalMinutes: number;
  batchSize: number;
  /** Tests run the schedule under their own id and task queue, beside the real one. */
  scheduleId?: string;
  taskQueue?: string;
}

/**
 * The sweep of expired idempotency keys and one-time tokens. A run that is still going when the next
 * is due is skipped rather than queued (two sweeps would only contend for the same rows), and after
 * an outage at most one interval's missed run is caught up. The execution timeout keeps a stuck run
 * from skipping every later one.
 */
export function expireStaleRecordsSchedule({
  intervalMinutes, batchSize, scheduleId = EXPIRE_STALE_RECORDS_SCHEDULE_ID, taskQueue = taskQueues.maintenance,
}: ExpireStaleRecordsScheduleSettings): StartWorkflow<typeof expireStaleRecords> {
  return {
    scheduleId,
    spec: { intervals: [{ every: `${intervalMinutes} minutes` }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'expireStaleRecords',
      // The server appends each run's scheduled time, so every run has its own business key.
      workflowId: scheduleId,
      taskQueue,
      args: [{ batchSize }],
      workflowExecutionTimeout: '1 hour',
      staticSummary: 'Deletes expired idempotency keys and one-time tokens',
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: `${intervalMinutes} minutes` },
  };
}

export const AUDIT_RETENTION_SCHEDULE_ID = 'audit.retention';

export interface AuditRetentionScheduleSettings {
  hotDays: number;
  coldYears: number;
  retentionIntervalHours: number;
  scheduleId?: string;
  taskQueue?: string;
}

/**
 * Audit retention (workflows/audit/retention.workflow.ts): daily by default. A run still going when
 * the next is due is skipped (both would archive the same months); a missed run is caught up within
 * one interval. Every step is idempotent, so a run cut short by its timeout is resumed by the next.
 */
export function auditRetentionSchedule({
  hotDays, coldYears, retentionIntervalHours, scheduleId = AUDIT_RETENTION_SCHEDULE_ID, taskQueue = taskQueues.audit,
}: AuditRetentionScheduleSettings): StartWorkflow<typeof auditRetention> {
  return {
    scheduleId,
    spec: { intervals: [{ every: `${retentionIntervalHours} hours` }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'auditRetention',
      workflowId: scheduleId,
      taskQueue,
      args: [{ hotDays, coldYears }],
      workflowExecutionTimeout: `${retentionIntervalHours} hours`,
      staticSummary: 'Moves audit months older than AUDIT_HOT_DAYS to cold storage; deletes them after AUDIT_COLD_YEARS',
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: `${retentionIntervalHours} hours` },
  };
}

export const USAGE_SNAPSHOT_SCHEDULE_ID = 'billing.usage-snapshot';

export interface UsageSnapshotScheduleSettings {
  scheduleId?: string;
  taskQueue?: string;
}

/**
 * The daily usage snapshot (workflows/billing/usage-snapshot.workflow.ts) at 00:05 UTC, for the day
 * that just ended. A run still going when the next is due is skipped; a missed run is caught up
 * within a day. The run is idempotent per day, so a repeat only fills in missing tenants.
 */
export function usageSnapshotSchedule({
  scheduleId = USAGE_SNAPSHOT_SCHEDULE_ID, taskQueue = taskQueues.billing,
}: UsageSnapshotScheduleSettings = {}): StartWorkflow<typeof usageSnapshot> {
  return {
    scheduleId,
    spec: { calendars: [{ hour: 0, minute: 5 }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'usageSnapshot',
      workflowId: scheduleId,
      taskQueue,
      args: [{}],
      workflowExecutionTimeout: '6 hours',
      staticSummary: 'Snapshots every tenant\'s usage of the day that just ended (GET /billing/usage/history)',
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
  };
}

export const MONEY_HOLD_SWEEP_SCHEDULE_ID = 'money.hold-sweep';

export interface MoneyHoldSweepScheduleSettings {
  holdCleanupIntervalSec: number;
  scheduleId?: string;
  taskQueue?: string;
}

/**
 * The safety net behind the hold workflows' own timers (docs/reference/money.md#rule-8): every
 * MONEY_HOLD_CLEANUP_INTERVAL_SEC (60 s), holds still held one interval past their expiry are
 * expired. Overlapping runs are skipped; missed runs are not caught up (the next one covers them).
 */
export function moneyHoldSweepSchedule({
  holdCleanupIntervalSec, scheduleId = MONEY_HOLD_SWEEP_SCHEDULE_ID, taskQueue = taskQueues.money,
}: MoneyHoldSweepScheduleSettings): StartWorkflow<typeof moneyHoldSweep> {
  return {
    scheduleId,
    spec: { intervals: [{ every: `${holdCleanupIntervalSec} seconds` }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'moneyHoldSweep',
      workflowId: scheduleId,
      taskQueue,
      args: [{ graceSeconds: holdCleanupIntervalSec, batchSize: 500 }],
      workflowExecutionTimeout: '10 minutes',
      staticSummary: 'Expires holds still held a sweep interval past their expiry (their own timer missed them)',
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: `${holdCleanupIntervalSec} seconds` },
  };
}

export const WEBHOOK_REDELIVERY_SCHEDULE_ID = 'billing.webhook-redelivery';

export interface WebhookRedeliveryScheduleSettings {
  /** config.billing and config.mail: the interval, and where the subscription workflows run. */
  cfg: Pick<Config, 'billing' | 'mail'>;
  scheduleId?: string;
  taskQueue?: string;
}

/**
 * Delivers webhook receipts the gateway recorded but did not hand to their subscription workflow
 * (docs/decisions/billing.md, Webhook delivery). Every BILLING_WEBHOOK_REDELIVERY_INTERVAL_SEC it takes receipts at
 * least one interval old, so it never races a delivery still in the receiving gateway's hands.
 * Overlapping runs are skipped; missed runs are not caught up (the next one covers them).
 */
export function webhookRedeliverySchedule({
  cfg, scheduleId = WEBHOOK_REDELIVERY_SCHEDULE_ID, taskQueue = taskQueues.billing,
}: WebhookRedeliveryScheduleSettings): StartWorkflow<typeof webhookRedelivery> {
  const interval = cfg.billing.webhookRedeliveryIntervalSec;
  return {
    scheduleId,
    spec: { intervals: [{ every: `${interval} seconds` }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'webhookRedelivery',
      workflowId: scheduleId,
      taskQueue,
      args: [{ graceSeconds: interval, batchSize: 200, maxBatches: 25, target: subscriptionTarget(cfg) }],
      workflowExecutionTimeout: '10 minutes',
      staticSummary: 'Delivers webhook receipts their gateway did not hand to the subscription workflow',
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: `${interval} seconds` },
  };
}

export const FILES_ORPHAN_SWEEP_SCHEDULE_ID = 'files.orphan-sweep';

export interface FilesOrphanSweepScheduleSettings {
  /** config.files: FILES_ORPHAN_GRACE_HOURS, FILES_ORPHAN_RETENTION_DAYS and the files task queue. */
  files: Pick<Config['files'], 'orphanGraceHours' | 'orphanRetentionDays' | 'taskQueue'>;
  scheduleId?: string;
}

/**
 * The daily orphan sweep (workflows/files/orphan-sweep.workflow.ts, docs/decisions/files.md Orphans)
 * at 03:15 UTC, away from the usage snapshot's midnight. A run still going when the next is due is
 * skipped (both would look at the same files); a missed run is caught up within a day. Every step is
 * safe to repeat, so a run cut short by its timeout is taken up by the next.
 */
export function filesOrphanSweepSchedule({
  files, scheduleId = FILES_ORPHAN_SWEEP_SCHEDULE_ID,
}: FilesOrphanSweepScheduleSettings): StartWorkflow<typeof filesOrphanSweep> {
  return {
    scheduleId,
    spec: { calendars: [{ hour: 3, minute: 15 }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'filesOrphanSweep',
      workflowId: scheduleId,
      taskQueue: files.taskQueue,
      args: [{ graceHours: files.orphanGraceHours, retentionDays: files.orphanRetentionDays, batchSize: 200 }],
      workflowExecutionTimeout: '20 hours',
      staticSummary: 'Marks unreferenced files as orphans and permanently deletes those orphaned FILES_ORPHAN_RETENTION_DAYS ago',
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
  };
}

export const FILES_STAGING_SWEEP_SCHEDULE_ID = 'files.staging-sweep';

export interface FilesStagingSweepScheduleSettings {
  /** config.files (FILES_STAGING_SWEEP_*, the scans' FILES_STAGING_TTL_HOURS and task queue) and config.mail (NOTIFY_TASK_QUEUE). */
  cfg: Pick<Config, 'files' | 'mail'>;
  scheduleId?: string;
  /** Where the sweep runs; the scans it starts go to FILES_TASK_QUEUE, where the gateway starts them. */
  taskQueue?: string;
}

/**
 * The staging sweep (workflows/files/staging-sweep.workflow.ts, docs/decisions/files.md Staging
 * sweep): every FILES_STAGING_SWEEP_MINUTES it starts the scan of the pending_scan files recorded
 * more than FILES_STAGING_SWEEP_GRACE_MINUTES ago that have none (their gateway stopped between
 * recording them and starting their scan), with the settings the gateway starts scans with, at most
 * 10 pages of 100 files a run. Overlapping runs are skipped; missed runs are not caught up (the next
 * one covers them).
 */
export function filesStagingSweepSchedule({
  cfg, scheduleId = FILES_STAGING_SWEEP_SCHEDULE_ID, taskQueue = cfg.files.taskQueue,
}: FilesStagingSweepScheduleSettings): StartWorkflow<typeof filesStagingSweep> {
  const minutes = cfg.files.stagingSweepMinutes;
  return {
    scheduleId,
    spec: { intervals: [{ every: `${minutes} minutes` }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'filesStagingSweep',
      workflowId: scheduleId,
      taskQueue,
      args: [{
        graceMinutes: cfg.files.stagingSweepGraceMinutes, batchSize: 100, maxBatches: 10,
        scan: { taskQueue: cfg.files.taskQueue, ...fileScanSettingsOf(cfg) },
      }],
      workflowExecutionTimeout: '10 minutes',
      staticSummary: 'Starts the scan of pending_scan files whose upload never started it (its gateway stopped in between)',
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: `${minutes} minutes` },
  };
}

export const FILES_RESCAN_CHECK_SCHEDULE_ID = 'files.rescan-check';

export interface FileRescanCheckScheduleSettings {
  /** config.files (FILES_RESCAN_*) and config.mail (where the admins' mails are sent from). */
  cfg: { files: Pick<Config['files'], 'rescanCheckMinutes' | 'rescanPerSecond' | 'rescanWindowDays' | 'taskQueue'>; mail: Pick<Config['mail'], 'taskQueue'> };
  scheduleId?: string;
  taskQueue?: string;
}

/**
 * The re-scan check (workflows/files/rescan.workflow.ts fileRescanCheck, docs/decisions/files.md
 * Re-scan): every FILES_RESCAN_CHECK_MINUTES it compares clamd's signature version with the one the
 * previous run saw (the Schedule's last completion result, which an update of the Schedule keeps),
 * and starts the re-scan of a new version. Overlapping runs are skipped; missed runs are not caught
 * up (the next one sees the same version).
 */
export function fileRescanCheckSchedule({
  cfg, scheduleId = FILES_RESCAN_CHECK_SCHEDULE_ID, taskQueue = cfg.files.taskQueue,
}: FileRescanCheckScheduleSettings): StartWorkflow<typeof fileRescanCheck> {
  const minutes = cfg.files.rescanCheckMinutes;
  return {
    scheduleId,
    spec: { intervals: [{ every: `${minutes} minutes` }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'fileRescanCheck',
      workflowId: scheduleId,
      taskQueue,
      args: [{ windowDays: cfg.files.rescanWindowDays, perSecond: cfg.files.rescanPerSecond, notifyTaskQueue: cfg.mail.taskQueue }],
      workflowExecutionTimeout: `${minutes} minutes`,
      staticSummary: 'Starts a re-scan of the recently stored files when clamd\'s signature version changes',
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: `${minutes} minutes` },
  };
}

/**
 * The workflows a Schedule starts carry the platform's search attributes as every other start does
 * (common/temporal/search-attributes.ts). Schedules run only fleet-wide sweeps, which work for no one
 * tenant, so they get their BusinessKind alone. A Schedule's starts pass through no client
 * interceptor (the server starts them), so they are set here, on its action.
 */
function withSearchAttributes<W extends Workflow>(options: StartWorkflow<W>): StartWorkflow<W> {
  const { action } = options;
  const workflowType = typeof action.workflowType === 'string' ? action.workflowType : action.workflowType.name;
  const typedSearchAttributes = withPlatformSearchAttributes(action.typedSearchAttributes, workflowType, undefined);
  // The action's type intersects a conditional on W's parameters, which TypeScript cannot narrow here.
  return typedSearchAttributes ? { ...options, action: { ...action, typedSearchAttributes } as typeof action } : options;
}

/**
 * Creates the schedule, or brings an existing one up to date with the given definition, so every
 * worker start may call it. Its state (an operator's pause and note) is kept across updates.
 */
export async function ensureSchedule<W extends Workflow>(
  client: Client,
  definition: StartWorkflow<W>,
): Promise<'created' | 'updated'> {
  const options = withSearchAttributes(definition);
  try {
    await client.schedule.create(options);
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await client.schedule.getHandle(options.scheduleId).update<W>((previous) => ({
    ...previous,
    spec: options.spec,
    action: options.action,
    policies: { ...previous.policies, ...options.policies },
  }));
  return 'updated';
}

/** Every Schedule of the platform; workers/main.ts calls it at start. */
export async function ensureSchedules(client: Client, cfg: Pick<Config, 'maintenance' | 'auditStorage' | 'moneyFlows' | 'billing' | 'mail' | 'files'>): Promise<void> {
  await ensureSchedule(client, expireStaleRecordsSchedule(cfg.maintenance));
  await ensureSchedule(client, auditRetentionSchedule(cfg.auditStorage));
  await ensureSchedule(client, usageSnapshotSchedule());
  await ensureSchedule(client, moneyHoldSweepSchedule(cfg.moneyFlows));
  await ensureSchedule(client, webhookRedeliverySchedule({ cfg }));
  await ensureSchedule(client, filesOrphanSweepSchedule({ files: cfg.files }));
  await ensureSchedule(client, filesStagingSweepSchedule({ cfg }));
  await ensureSchedule(client, fileRescanCheckSchedule({ cfg }));
}
