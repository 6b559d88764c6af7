// The one workflowsPath of every worker: each workflow of the platform is exported here.
export { expireStaleRecords } from './maintenance/expire-stale-records.workflow';
export { auditRetention } from './audit/retention.workflow';
export { auditColdExport } from './audit/cold-export.workflow';
export { sendEmail } from './notify/send-email.workflow';
export { subscriptionLifecycle } from './billing/subscription.workflow';
