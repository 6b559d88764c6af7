import type { Config } from '../../../common/config';
import type { ObjectStore } from '../../../common/object-store';
import type { DatabasePool } from '../../../db/pool';
import type { TemporalHandle } from '../../../common/temporal/client';

/** What GET /audit/export and GET /audit/export/:jobId work with; built once per gateway. */
export interface AuditExportDeps {
  settings: Config['auditStorage'];
  /** The application pool: queuing a cold-export job is a write. */
  db: DatabasePool;
  /** The read-only reporting pool: hot exports stream from it. */
  analyticsDb: DatabasePool;
  /** Finished cold exports are handed out as presigned URLs of this bucket. */
  objectStore: ObjectStore;
  /** Undefined until the gateway's start-up connection to Temporal succeeded. */
  temporal(): TemporalHandle | undefined;
  /**
   * docs/reference/audit.md#rule-15: an export waits until pending anonymizations of the tenant finish. Called
   * before the first record is read (services/audit/anonymization-lock.ts).
   */
  awaitPendingAnonymizations(tenantId: string): Promise<unknown>;
  /** The clock that tells hot from cold ranges; tests may move it. */
  now(): Date;
}
