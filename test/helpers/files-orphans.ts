import { z } from 'zod';
import type { ObjectStore } from '../../common/object-store';
import { sql, type DatabasePool } from '../../db/pool';
import { claimReferencedFiles, upsertFileReference } from '../../db/queries/files/references.queries';
import { withTenant } from '../../db/tenant';
import { makeAvailable } from './files';
import { samplePng, stageFile, type StagedFile } from './files-scan';

/**
 * Fixtures of the orphan sweep's tests: available files uploaded at a chosen time (the sweep compares
 * created_at with its workflow's clock, which the time-skipping server moves), their orphan marks and
 * their references, written and read as the owner role.
 */

export interface OrphanCandidate extends StagedFile {
  size: number;
}

/** An available PNG in `bucket`, with its original and a thumbnail in the store, uploaded at `createdAt`. */
export async function availableFileAt(
  owner: DatabasePool, store: ObjectStore, tenantId: string, bucket: string, createdAt: number,
): Promise<OrphanCandidate> {
  const png = await samplePng(48, 48);
  const file = await stageFile(owner, store, tenantId, { bucket, mimeType: 'image/png', content: png });
  await store.s3.removeObject(store.bucket, file.stagingKey);
  await makeAvailable(owner, store, { id: file.fileId, tenantId, bucket, mimeType: 'image/png' }, png, { icon_32: png });
  await owner.query(sql.unsafe`UPDATE files SET created_at = ${new Date(createdAt).toISOString()}::timestamptz WHERE id = ${file.fileId}`);
  return { ...file, size: png.length };
}

/** The file's orphan mark (ISO 8601) or null. */
export function orphanedAtOf(owner: DatabasePool, file: Pick<StagedFile, 'fileId'>): Promise<string | null> {
  return owner.oneFirst(sql.type(z.object({ orphanedAt: z.string().nullable() }))`
    SELECT orphaned_at AS "orphanedAt" FROM files WHERE id = ${file.fileId}
  `);
}

/** Sets (or clears) the mark directly, as a sweep of another day would have left it. */
export async function setOrphanedAt(owner: DatabasePool, file: Pick<StagedFile, 'fileId'>, at: number | null): Promise<void> {
  await owner.query(sql.unsafe`
    UPDATE files SET orphaned_at = ${at === null ? null : new Date(at).toISOString()}::timestamptz WHERE id = ${file.fileId}
  `);
}

/** A reference to the file by `referrer` of record `referrerId`, written as the data layer writes it (its mark cleared). */
export function referenceFile(app: DatabasePool, file: StagedFile, referrer: string, referrerId: string): Promise<void> {
  return withTenant(app, file.tenantId, async (tx) => {
    if (!(await claimReferencedFiles(tx, file.tenantId, [file.fileId])).has(file.fileId)) throw new Error(`file ${file.fileId} cannot be referenced`);
    await upsertFileReference(tx, { tenantId: file.tenantId, referrer, referrerId }, file.fileId);
  });
}

const referenceRow = z.object({ referrer: z.string(), referrerId: z.string(), fileId: z.string() });

/** The tenant's references, by referrer then record. */
export function referencesOf(owner: DatabasePool, tenantId: string) {
  return owner.any(sql.type(referenceRow)`
    SELECT referrer, referrer_id AS "referrerId", file_id AS "fileId" FROM file_references
    WHERE tenant_id = ${tenantId} ORDER BY referrer, referrer_id
  `);
}
