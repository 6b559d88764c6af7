import type { Config } from '../../../common/config';
import type { TemporalHandle } from '../../../common/temporal/client';
import type { DatabasePool } from '../../../db/pool';
import type { AuditTrail } from '../audit-trail';
import type { WebhookUrlPolicy } from './url-policy';

/** What the webhook routes work with; built once per gateway (api/routes/index.ts). */
export interface WebhookDeps {
  /** The application pool: every statement runs under withTenant. */
  db: DatabasePool;
  /** Undefined until the gateway's start-up connection to Temporal succeeded: a test delivery is then 503. */
  temporal(): TemporalHandle | undefined;
  policy: WebhookUrlPolicy;
  /** Where delivery workflows run (EVENTS_TASK_QUEUE) and where their mails go (NOTIFY_TASK_QUEUE). */
  taskQueues: WebhookTaskQueues;
  /** Where endpoint changes are audited: audit's writer, passed in (services/events/audit-trail.ts). */
  audit: AuditTrail;
}

export interface WebhookTaskQueues {
  events: string;
  notify: string;
}

/** Plain http in development only; loopback as WEBHOOKS_ALLOW_LOOPBACK says (services/events/webhooks/url-policy.ts). */
export function webhookUrlPolicy(cfg: Pick<Config, 'env' | 'webhooks'>): WebhookUrlPolicy {
  return { allowHttp: cfg.env === 'development', allowLoopback: cfg.webhooks.allowLoopback };
}

export function webhookTaskQueues(cfg: Pick<Config, 'eventsWorkflows' | 'mail'>): WebhookTaskQueues {
  return { events: cfg.eventsWorkflows.taskQueue, notify: cfg.mail.taskQueue };
}

export function createWebhookDeps(
  cfg: Readonly<Config>, db: DatabasePool, temporal: () => TemporalHandle | undefined, audit: AuditTrail,
): WebhookDeps {
  return { db, temporal, policy: webhookUrlPolicy(cfg), taskQueues: webhookTaskQueues(cfg), audit };
}
