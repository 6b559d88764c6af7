// The one workflowsPath of every worker: each workflow of the platform is exported here.
export { expireStaleRecords } from './maintenance/expire-stale-records.workflow';
export { auditRetention } from './audit/retention.workflow';
export { auditColdExport } from './audit/cold-export.workflow';
export { sendEmail } from './notify/send-email.workflow';
export { usageSnapshot } from './billing/usage-snapshot.workflow';
export { tenantTermination } from './billing/termination.workflow';
export { moneyHold } from './money/hold.workflow';
export { moneyTransfer } from './money/transfer.workflow';
export { moneyHoldSweep } from './money/hold-sweep.workflow';
export { subscriptionLifecycle } from './billing/subscription.workflow';
export { webhookRedelivery } from './billing/webhook-redelivery.workflow';
export { fileScan } from './files/scan.workflow';
export { fileTrash } from './files/trash.workflow';
export { filesOrphanSweep } from './files/orphan-sweep.workflow';
export { filesStagingSweep } from './files/staging-sweep.workflow';
export { fileProcess } from './files/process.workflow';
export { fileRescan, fileRescanCheck } from './files/rescan.workflow';
export { deadLetterReplay } from './events/dead-letter-replay.workflow';
