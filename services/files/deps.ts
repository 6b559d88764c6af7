import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import type { ObjectStore } from '../../common/object-store';
import type { DatabasePool } from '../../db/pool';

/**
 * Starts the scan workflow of a file (services/files/scan-client.ts FileScanStarter): whose object is
 * in staging, or (staged false) a presigned upload whose PUT the workflow waits for, `uploadTtlMs`.
 */
export interface FileScans {
  start(input: FileScanRequest): Promise<void>;
}

/** A file whose scan is to start: its size (recorded at the upload) decides where the scan runs. */
export interface FileScanRequest {
  tenantId: string;
  fileId: string;
  sizeBytes: number;
  staged?: boolean;
  uploadTtlMs?: number;
}

/**
 * The trash timers of deleted files (services/files/trash-client.ts FileTrashTimers): started with the
 * deletion, told of a restore.
 */
export interface FileTrashes {
  start(input: { tenantId: string; fileId: string; deletedAt: string }): Promise<void>;
  restored(fileId: string): Promise<void>;
}

/** What the files routes work with; built once per gateway (api/gateway-runtime.ts). */
export interface FilesDeps {
  /** The application pool (platform_app): every statement runs under withTenant. */
  db: DatabasePool;
  /** The platform's bucket; staging and stored files live under the tenant's prefix (object-keys.ts). */
  objectStore: ObjectStore;
  /** Undefined while the workflow service is not connected: an upload is then refused before it is read. */
  scans(): FileScans | undefined;
  /** Undefined while the workflow service is not connected: a delete is then refused (its purge could not be timed). */
  trashes(): FileTrashes | undefined;
  settings: Config['files'];
  /** Billing is deployed (BILLING_ENABLED): the plan's storage_bytes limit is enforced; usage is counted either way. */
  enforcePlanLimits: boolean;
  logger: Logger;
}
