import { z } from 'zod';
import { sql, type DatabasePool } from '../../pool';

const backlogRow = z.object({
  backlog: z.enum(['outbox', 'files_pending_scan', 'audit_fallback', 'dead_letters']),
  consumerGroup: z.string().nullable(),
  waiting: z.number(),
  oldestAgeSeconds: z.number().nullable(),
});

/** How many rows wait, and how long the oldest has (0 when none waits). */
export interface Backlog {
  waiting: number;
  oldestAgeSeconds: number;
}

/** The fleet-wide backlogs of migration 0037, as the gateway's /metrics reports them. */
export interface OperationsBacklogs {
  outbox: Backlog;
  filesPendingScan: Backlog;
  auditFallback: Backlog;
  /** Pending dead letters per platform group, all tenants' subscriptions as `tenant-subscriptions`; groups with none are absent. */
  deadLetters: ReadonlyArray<{ group: string; pending: number }>;
}

/**
 * The backlogs across tenants (operations_backlogs(), a SECURITY DEFINER function: platform_app
 * cannot see them otherwise), cancelled by PostgreSQL after `timeoutMs` (statement_timeout, local to
 * this transaction), so a slow or locked table costs a scrape at most that long. Ages are measured on
 * the database's clock, the one the rows were stamped with, and at the statement's time rather than
 * the transaction's (now()), which a row committed meanwhile could postdate.
 */
export async function selectOperationsBacklogs(db: DatabasePool, timeoutMs: number): Promise<OperationsBacklogs> {
  const rows = await db.transaction(async (tx) => {
    await tx.query(sql.unsafe`SELECT set_config('statement_timeout', ${`${timeoutMs}ms`}, true)`);
    return tx.any(sql.type(backlogRow)`
      SELECT backlog, consumer_group AS "consumerGroup", waiting,
             extract(epoch FROM clock_timestamp() - oldest_at)::float8 AS "oldestAgeSeconds"
      FROM operations_backlogs()
    `);
  });
  const scalar = (name: z.infer<typeof backlogRow>['backlog']): Backlog => {
    const row = rows.find((candidate) => candidate.backlog === name);
    return { waiting: row?.waiting ?? 0, oldestAgeSeconds: row?.oldestAgeSeconds ?? 0 };
  };
  return {
    outbox: scalar('outbox'),
    filesPendingScan: scalar('files_pending_scan'),
    auditFallback: scalar('audit_fallback'),
    deadLetters: rows.filter((row) => row.backlog === 'dead_letters' && row.consumerGroup !== null)
      .map((row) => ({ group: row.consumerGroup!, pending: row.waiting })),
  };
}
