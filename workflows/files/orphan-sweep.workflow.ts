import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { FileOrphanActivities, OrphanSweepRun } from '../../activities/files/orphans.activities';

export interface FilesOrphanSweepInput {
  /** FILES_ORPHAN_GRACE_HOURS: a file unreferenced this long after its upload is marked orphaned. */
  graceHours: number;
  /** FILES_ORPHAN_RETENTION_DAYS: an orphan still unreferenced this long after its mark is purged. */
  retentionDays: number;
  /** Files per page (and per purge activity). */
  batchSize: number;
  /** Only this tenant: an operator's run for one tenant (and the tests'); every tenant when absent. */
  tenantId?: string;
  /** Carried across continueAsNew: the run's clock, the last tenant swept and the counts so far. */
  asOf?: string;
  afterTenantId?: string;
  totals?: FilesOrphanSweepResult;
}

export interface FilesOrphanSweepResult {
  tenants: number;
  marked: number;
  /** Marks cleared by the review: the file was referenced again. */
  cleared: number;
  purged: number;
}

/** Tenants asked for at a time; each then gets its own activities. */
const TENANTS_PER_PAGE = 100;

/**
 * Pages of a few hundred rows and a transaction per purged file: minutes at most, heartbeating each
 * page. Retries are bounded: a broken store or database fails the run visibly, and the next day's
 * run resumes, since every step is safe to repeat.
 */
const orphans = proxyActivities<FileOrphanActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '30 seconds', backoffCoefficient: 2, maximumAttempts: 5 },
});

/** One tenant: marks its new orphans, then reviews its marked files page by page and purges those due. */
async function sweepTenant(tenantId: string, run: OrphanSweepRun, totals: FilesOrphanSweepResult): Promise<void> {
  totals.marked += (await orphans.markOrphans(tenantId, run)).marked;
  let after: string | null = null;
  do {
    const page: { due: string[]; cleared: number; next: string | null } = await orphans.reviewOrphans(tenantId, run, after);
    totals.cleared += page.cleared;
    if (page.due.length > 0) totals.purged += (await orphans.purgeOrphans(tenantId, run, page.due)).purged;
    after = page.next;
  } while (after !== null);
  totals.tenants += 1;
}

/**
 * The orphan sweep (docs/reference/files.md#rule-19: a file nothing refers to 24 hours after
 * its upload is marked, and purged 30 days later), started daily by the Schedule
 * `files.orphan-sweep`: tenant by tenant, in id order, under each tenant's row-level security. The
 * run's clock (`asOf`) is its workflow time, fixed when it starts, so a replay or a continued run
 * decides the same. A long run continues as new between tenants when its history grows large.
 */
export async function filesOrphanSweep(input: FilesOrphanSweepInput): Promise<FilesOrphanSweepResult> {
  const run: OrphanSweepRun = {
    asOf: input.asOf ?? new Date().toISOString(), graceHours: input.graceHours, retentionDays: input.retentionDays, batchSize: input.batchSize,
  };
  const totals: FilesOrphanSweepResult = { ...(input.totals ?? { tenants: 0, marked: 0, cleared: 0, purged: 0 }) };
  let after = input.afterTenantId ?? null;
  for (;;) {
    const tenants = input.tenantId
      ? (after === null ? [input.tenantId] : [])
      : await orphans.orphanSweepTenants(after, TENANTS_PER_PAGE);
    for (const tenantId of tenants) {
      await sweepTenant(tenantId, run, totals);
      after = tenantId;
      if (workflowInfo().continueAsNewSuggested) {
        return continueAsNew<typeof filesOrphanSweep>({ ...input, asOf: run.asOf, afterTenantId: after, totals });
      }
    }
    if (tenants.length < TENANTS_PER_PAGE) return totals;
  }
}
