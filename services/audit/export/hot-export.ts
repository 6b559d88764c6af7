import { pipeline, Transform, type Readable } from 'node:stream';
import { createExportEncoder } from '../export-format';
import type { ExportFormat } from '../../../db/queries/audit/audit-export.queries';
import { allowLongStream, streamRecordsInRange } from '../../../db/queries/audit/audit-export.queries';
import { withTenant } from '../../../db/tenant';
import type { AuditExportDeps } from './deps';
import type { ExportRequestRange } from './plan';

/**
 * Opens a hot export: one server-side cursor on the read-only reporting pool, in the tenant's
 * transaction, encoded record by record and read only as fast as the client downloads (the
 * response's backpressure reaches the cursor), so memory stays flat for any number of records.
 *
 * The stream is handed over once its first bytes exist, so a query that fails at once (no
 * connection, a broken statement) is still answered with a problem; a failure after that can only
 * cut the response short, which the client sees as an incomplete download. A client that goes away
 * destroys the stream, which ends the query and its transaction.
 */
export async function openHotExport(
  deps: AuditExportDeps, tenantId: string, range: ExportRequestRange, format: ExportFormat,
): Promise<Readable> {
  await deps.awaitPendingAnonymizations(tenantId);
  const bounds = { since: range.since.toISOString(), until: range.until.toISOString() };
  return new Promise<Readable>((resolve, reject) => {
    let body: Readable | undefined;
    const started = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        resolve(started);
        done(null, chunk);
      },
    });
    withTenant(deps.analyticsDb, tenantId, async (tx) => {
      await allowLongStream(tx);
      await streamRecordsInRange(tx, tenantId, bounds, (records) => {
        body = pipeline(records, createExportEncoder(format), started, () => undefined);
      });
    }).catch((error: Error) => {
      reject(error);
      body?.destroy(error);
    });
  });
}
