import type { Logger } from '../../common/logger';
import type { ObjectStore } from '../../common/object-store';
import { problems } from '../../common/problems';
import type { Progress } from '../../common/progress';
import type { DatabasePool } from '../../db/pool';
import { selectFile, type FileRow } from '../../db/queries/files/files.queries';
import { withTenant } from '../../db/tenant';
import { scanStagedObject, statStagedObject, type StagedObjectVerdict, type VirusScanner } from './scanner';

/**
 * What the scan workflow's steps work with (activities/files/scan.activities.ts): the application
 * role under row-level security, the platform's bucket, clamd.
 */
export interface FileScanDeps {
  appPool: DatabasePool;
  objectStore: ObjectStore;
  scanner: VirusScanner;
  logger: Logger;
}

/** The file a scan workflow is about. */
export interface FileRef {
  tenantId: string;
  fileId: string;
}

/** Who a change is recorded for: the sender of the request behind the workflow, and its trace. */
export interface FileActor {
  actorId: string | null;
  traceId?: string;
  /** No person acts: a Schedule's sweep (the orphan sweep); the audit record names no actor, not the uploader. */
  platform?: true;
}

/** The file's row; file-not-found when there is none in its tenant. */
export async function loadFile({ appPool }: Pick<FileScanDeps, 'appPool'>, { tenantId, fileId }: FileRef): Promise<FileRow> {
  const file = await withTenant(appPool, tenantId, (tx) => selectFile(tx, tenantId, fileId));
  if (!file) throw problems.fileNotFound(fileId);
  return file;
}

/**
 * Scans the file's staged object with clamd (services/files/scanner.ts). The row names the staging
 * key, so a file staged under an older key layout is still found. The object must have the size
 * recorded (and counted as storage) for the file: a presigned upload's declared size.
 */
export async function scanFile(deps: FileScanDeps, ref: FileRef, progress: Progress): Promise<StagedObjectVerdict> {
  const file = await loadFile(deps, ref);
  return scanStagedObject(deps, file.stagingKey, progress, file.sizeBytes);
}

/**
 * Whether a presigned upload's PUT landed in staging although no notification said so (Kafka was
 * down when the store sent it): the scan workflow's last look before it rejects the file as
 * upload-expired.
 */
export async function stagedObjectLanded(deps: Pick<FileScanDeps, 'appPool' | 'objectStore'>, ref: FileRef): Promise<boolean> {
  const file = await loadFile(deps, ref);
  return (await statStagedObject(deps.objectStore, file.stagingKey)) !== null;
}
