import { removeObjects, type ObjectStore } from '../../common/object-store';
import type { Progress } from '../../common/progress';
import type { DatabasePool } from '../../db/pool';
import {
  markOrphanPage, markOrphanPurged, reviewOrphanPage, selectPurgedOrphan, selectTenantsWithOrphanCandidates,
} from '../../db/queries/files/orphans.queries';
import { withTenant } from '../../db/tenant';
import type { FileBucket } from './object-keys';
import type { FileActor } from './scan';
import { objectKeysOf, releasePurgedFile } from './trash';

/**
 * Orphaned files (docs/reference/files.md#rule-19; docs/decisions/files.md, Orphans): an available file of a swept
 * bucket that nothing references (migration 0030's file_references: data-layer `file` fields, user
 * avatars) `graceHours` after its upload is marked orphaned; one still marked and unreferenced
 * `retentionDays` later is purged like a permanent delete (storage freed, storage_bytes released),
 * audit `files.orphan.deleted`. A reference written meanwhile clears the mark. The daily Schedule's
 * workflow (workflows/files/orphan-sweep.workflow.ts) drives these steps tenant by tenant; each is
 * safe to repeat and reads bounded pages.
 */

/**
 * The buckets whose files only live as long as something references them: a user's picture and a
 * record's attachments. `assets` are referenced in ways the platform does not see (a module's
 * configuration, URLs in content); `exports` and `modules` are the platform's own, with their own
 * lifecycles. Their files are never orphaned.
 */
export const ORPHAN_BUCKETS: readonly FileBucket[] = ['avatars', 'documents'];

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The sweep records its changes as the platform's, not as the uploader's. */
const SWEEP: FileActor = { actorId: null, platform: true };

export interface FileOrphanDeps {
  /** The application role: every step but the list of tenants runs in its tenant's transaction, under row-level security. */
  appPool: DatabasePool;
  /** The owner role, for the one look across every tenant (which tenants have candidates). */
  fleetPool: DatabasePool;
  objectStore: ObjectStore;
}

/** The sweep's settings and its clock: `asOf` is the workflow's time, so a repeated step decides the same. */
export interface OrphanSweepRun {
  /** ISO 8601. */
  asOf: string;
  graceHours: number;
  retentionDays: number;
  batchSize: number;
}

const before = (iso: string, ms: number) => new Date(Date.parse(iso) - ms).toISOString();

/** The orphan mark at or before which a file is due for the purge. */
export const orphanedByOf = (run: Pick<OrphanSweepRun, 'asOf' | 'retentionDays'>) => before(run.asOf, run.retentionDays * DAY_MS);

/** The next tenants after `after` (id order) that have available files in a swept bucket. */
export function tenantsWithOrphanCandidates({ fleetPool }: Pick<FileOrphanDeps, 'fleetPool'>, after: string | null, limit: number): Promise<readonly string[]> {
  return selectTenantsWithOrphanCandidates(fleetPool, ORPHAN_BUCKETS, after, limit);
}

/**
 * Marks the tenant's unreferenced files uploaded more than graceHours before asOf, page by page
 * (one short transaction each, reporting after each). A repeat marks only what is still unmarked.
 */
export async function markOrphans(
  { appPool }: Pick<FileOrphanDeps, 'appPool'>, tenantId: string, run: OrphanSweepRun, progress: Progress,
): Promise<{ marked: number }> {
  const createdBefore = before(run.asOf, run.graceHours * HOUR_MS);
  let after: string | null = null;
  let marked = 0;
  for (;;) {
    const page = await withTenant(appPool, tenantId, (tx) => markOrphanPage(tx, {
      tenantId, buckets: ORPHAN_BUCKETS, createdBefore, asOf: run.asOf, after, limit: run.batchSize,
    }));
    marked += page.marked;
    progress({ marked, after: page.lastId });
    if (page.scanned < run.batchSize || !page.lastId) return { marked };
    after = page.lastId;
  }
}

/**
 * One page of the tenant's marked files after `after`: marks of files referenced again are cleared,
 * and those due for the purge are answered (the workflow hands them to purgeOrphans).
 */
export function reviewOrphans(
  { appPool }: Pick<FileOrphanDeps, 'appPool'>, tenantId: string, run: OrphanSweepRun, after: string | null,
): Promise<{ due: string[]; cleared: number; next: string | null }> {
  return withTenant(appPool, tenantId, async (tx) => {
    const page = await reviewOrphanPage(tx, { tenantId, buckets: ORPHAN_BUCKETS, orphanedBy: orphanedByOf(run), after, limit: run.batchSize });
    return { due: page.due, cleared: page.cleared, next: page.scanned < run.batchSize ? null : page.lastId };
  });
}

/**
 * Purges each file still due (orphaned at or before the run's cutoff, still unreferenced), one
 * transaction per file: purged, storage_bytes released, audit `files.orphan.deleted`; then its
 * objects are removed. Safe to repeat with the same ids: a file this sweep already purged only has
 * its objects removed again, which is how a removal that failed after the commit is finished.
 */
export async function purgeOrphans(
  { appPool, objectStore }: Pick<FileOrphanDeps, 'appPool' | 'objectStore'>, tenantId: string, run: OrphanSweepRun, fileIds: readonly string[],
  progress: Progress,
): Promise<{ purged: number }> {
  const orphanedBy = orphanedByOf(run);
  let purged = 0;
  for (const fileId of fileIds) {
    const { file, now } = await withTenant(appPool, tenantId, async (tx) => {
      const row = await markOrphanPurged(tx, tenantId, fileId, orphanedBy);
      if (!row) return { file: await selectPurgedOrphan(tx, tenantId, fileId), now: false };
      await releasePurgedFile(tx, row, 'files.orphan.deleted', SWEEP, { orphanedBy, retentionDays: run.retentionDays });
      return { file: row, now: true };
    });
    if (file) await removeObjects(objectStore, objectKeysOf(file));
    if (now) purged += 1;
    progress({ purged, fileId });
  }
  return { purged };
}
