import type { Config } from '../../../common/config';
import type { TemporalHandle } from '../../temporal/client';
import type { Connections } from '../../runtime/connections';
import type { AuditExportDeps } from './deps';

/**
 * Builds the export services from the gateway's clients. Exports wait for pending anonymizations
 * through `awaitPendingAnonymizations`; until the anonymization lock (api/audit/anonymization-lock.ts)
 * is part of the gateway there is nothing to wait for, and the wait returns at once.
 */
export function createAuditExportServices(
  config: Readonly<Config>, connections: Connections, temporal: () => TemporalHandle | undefined,
): AuditExportDeps {
  return {
    settings: config.auditStorage,
    db: connections.db,
    analyticsDb: connections.analyticsDb,
    objectStore: { s3: connections.s3, bucket: config.s3.bucket },
    temporal,
    awaitPendingAnonymizations: async () => true,
    now: () => new Date(),
  };
}
