import type { DatabasePool } from '../db/pool';
import type { Logger } from '../common/logger';
import type { Domain } from '../common/temporal/task-queues';
import { createMaintenanceActivities } from './maintenance/expire-stale-records.activities';
import type { SmtpSender } from '../common/notify/smtp';
import { createNotifyActivities } from './notify/mail.activities';

export interface ActivityDeps {
  /** The owner role's pool, for system work across tenants (see MaintenanceDeps). */
  ownerPool: DatabasePool;
  /** Bound to the running activity's context by the worker (contextBoundLogger). */
  logger: Logger;
  /** Mail delivery of the notify activities (common/notify/smtp.ts). */
  smtp: SmtpSender;
}

/**
 * Every activity, grouped by the domain whose task queue serves it. workers/main.ts starts one Worker
 * per domain listed here, so adding a domain's activities is one line.
 */
export function createActivities(deps: ActivityDeps) {
  return {
    maintenance: createMaintenanceActivities(deps),
    notify: createNotifyActivities(deps),
  } satisfies Partial<Record<Domain, object>>;
}
