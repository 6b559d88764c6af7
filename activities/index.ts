import type { DatabasePool } from '../db/pool';
import type { Logger } from '../common/logger';
import type { ObjectStore } from '../common/object-store';
import type { Domain } from '../common/temporal/task-queues';
import { createMaintenanceActivities } from './maintenance/expire-stale-records.activities';
import { createAuditColdExportActivities } from './audit/cold-export.activities';
import { createAuditRetentionActivities } from './audit/retention.activities';
import type { SmtpSender } from '../services/notify/smtp';
import { createNotifyActivities } from './notify/mail.activities';
import { createUsageSnapshotActivities } from './billing/usage-snapshot.activities';
import { createTerminationActivities } from './billing/termination.activities';
import type { Config } from '../common/config';
import { createMoneyActivities } from './money';
import { createBillingActivities } from './billing/subscription.activities';
import { createWebhookRedeliveryActivities } from './billing/webhook-redelivery.activities';
import { createFileScanActivities } from './files/scan.activities';
import { createFileTrashActivities } from './files/trash.activities';
import { createFileRescanActivities } from './files/rescan.activities';
import { createFileOrphanActivities } from './files/orphans.activities';
import { createFileStagingSweepActivities } from './files/staging-sweep.activities';
import { createFileProcessActivities } from './files/process.activities';
import { createClamdScanner } from '../services/files/scanner';
import { config } from '../common/config';
import { createKafka, ReconnectingProducer } from '../common/kafka';
import { createDeadLetterActivities, type WorkerProducer } from './events/dead-letters.activities';
import { createWebhookActivities } from './events/webhooks.activities';
import { webhookUrlPolicy } from '../services/events/webhooks/deps';
import type { WebhookUrlPolicy } from '../services/events/webhooks/url-policy';

export interface ActivityDeps {
  /**
   * The application role's pool (no BYPASSRLS): every activity that works for one tenant runs in
   * that tenant's transaction (withTenant) and names the tenant in its queries, as the gateway does.
   */
  appPool: DatabasePool;
  /**
   * The owner role's pool, which row-level security does not filter: only the fleet-wide sweeps of
   * the Schedules (maintenance, audit retention, usage snapshots, hold sweep, webhook redelivery, file orphans,
   * the files staging sweep, the files re-scan's walk over tenants) use it.
   */
  fleetPool: DatabasePool;
  /** Bound to the running activity's context by the worker (contextBoundLogger). */
  logger: Logger;
  /** The platform's bucket: audit cold storage and cold exports, files (staging, originals, thumbnails). */
  objectStore: ObjectStore;
  /** Mail delivery of the notify activities (services/notify/smtp.ts). */
  smtp: SmtpSender;
  /** Pace and batch size of tenant terminations; the process configuration when absent. */
  billingLimits?: Config['billingLimits'];
  /** The clamd that scans uploads (CLAMAV_HOST, CLAMAV_PORT); the process configuration when absent. */
  clamav?: Config['clamav'];
  /**
   * The producer that re-publishes dead letters (replay-all); when absent, an ordered producer on
   * KAFKA_BROKERS, connected on its first page.
   */
  eventsProducer?: WorkerProducer;
  /** Where webhooks may be sent (services/events/webhooks/url-policy.ts); the process configuration's when absent. */
  webhookPolicy?: WebhookUrlPolicy;
}

type Intersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never;

/**
 * One domain's activities from several factories. A name two factories register is refused when the
 * worker starts: a spread would keep the last one silently, and a workflow would call the wrong code
 * (test/unit/infra/activity-names.test.ts).
 */
export function distinctActivities<Groups extends object[]>(...groups: Groups): Intersection<Groups[number]> {
  const merged: Record<string, unknown> = {};
  for (const group of groups) {
    for (const [name, activity] of Object.entries(group)) {
      if (name in merged) throw new Error(`two activity factories register the activity ${name}`);
      merged[name] = activity;
    }
  }
  return merged as Intersection<Groups[number]>;
}

/**
 * Every activity, grouped by the domain whose task queue serves it. workers/main.ts starts one Worker
 * per domain listed here, so adding a domain's activities is one line.
 */
export function createActivities(deps: ActivityDeps) {
  // One clamd client for the scan pipeline and the re-scan.
  const scanner = createClamdScanner(deps.clamav ?? config().clamav);
  return {
    maintenance: createMaintenanceActivities(deps),
    audit: distinctActivities(createAuditRetentionActivities(deps), createAuditColdExportActivities(deps)),
    notify: createNotifyActivities(deps),
    billing: distinctActivities(
      createBillingActivities(deps), createUsageSnapshotActivities(deps), createTerminationActivities(deps), createWebhookRedeliveryActivities(deps),
    ),
    money: createMoneyActivities(deps),
    events: distinctActivities(
      createDeadLetterActivities({
        appPool: deps.appPool, producer: deps.eventsProducer ?? new ReconnectingProducer(createKafka(config().kafka, deps.logger)),
      }),
      createWebhookActivities({
        appPool: deps.appPool, logger: deps.logger, policy: deps.webhookPolicy ?? webhookUrlPolicy(config()), consumers: config().consumers,
      }),
    ),
    files: distinctActivities(
      createFileScanActivities({ ...deps, scanner }),
      createFileRescanActivities({ ...deps, scanner }),
      createFileTrashActivities(deps),
      createFileOrphanActivities(deps),
      createFileStagingSweepActivities(deps),
      createFileProcessActivities(deps),
    ),
  } satisfies Partial<Record<Domain, object>>;
}
