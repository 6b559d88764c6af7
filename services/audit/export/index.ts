import type { Config } from '../../../common/config';
import type { TemporalHandle } from '../../../common/temporal/client';
import type { Client as MinioClient } from 'minio';
import type { DatabasePool } from '../../../db/pool';
import { anonymizationTiming, awaitPendingAnonymizations } from '../anonymization-lock';
import type { AuditExportDeps } from './deps';

/**
 * Builds the export services from the gateway's clients. An export first waits for the tenant's
 * anonymizations in progress (docs/reference/audit.md#rule-15: 100 ms polls, up to 5 s), then reads the masked view.
 */
export function createAuditExportServices(
  config: Readonly<Config>, connections: { db: DatabasePool; analyticsDb: DatabasePool; s3: MinioClient }, temporal: () => TemporalHandle | undefined,
): AuditExportDeps {
  return {
    settings: config.auditStorage,
    db: connections.db,
    analyticsDb: connections.analyticsDb,
    objectStore: { s3: connections.s3, bucket: config.s3.bucket },
    temporal,
    awaitPendingAnonymizations: (tenantId) =>
      awaitPendingAnonymizations(connections.analyticsDb, tenantId, anonymizationTiming(config)),
    now: () => new Date(),
  };
}
