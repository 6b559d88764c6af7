import { randomBytes } from 'node:crypto';
import type { ChainedRecord } from '../../services/audit/chain';
import type { AuditRecord } from '../../services/audit/record';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { createObjectStore, type ObjectStore } from '../../common/object-store';
import type { DatabasePool } from '../../db/pool';
import { streamRecordsInRange } from '../../db/queries/audit/audit-export.queries';
import { selectChainPage } from '../../db/queries/audit/audit-records.queries';
import { withTenant } from '../../db/tenant';
import { AuditStore } from '../../services/audit/store';

/**
 * Audit records and object storage for the export and retention tests. Records are stored the way
 * the audit consumer stores them (AuditStore: partitions, seqs, hashes); a bucket of its own per
 * test file keeps objects apart and is emptied and removed afterwards.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

/** An instant `days` before now (negative: after), in whole milliseconds. */
export function daysAgo(days: number, from = Date.now()): Date {
  return new Date(Math.floor(from - days * DAY_MS));
}

export function auditRecord(tenantId: string, timestamp: Date, overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    id: newId(), tenantId, traceId: null, timestamp: timestamp.toISOString(),
    action: 'crm.contact.updated', entityType: 'contact', entityId: newId(), actorId: newId(), actorIp: '203.0.113.9',
    actorUserAgent: 'jest', impersonatorId: null, before: { name: 'Ada' }, after: { name: 'Ada Lovelace' }, meta: null,
    ...overrides,
  };
}

/** Stores records in the given order (their seqs follow it) and returns them as stored, in seq order. */
export async function storeAuditRecords(owner: DatabasePool, records: AuditRecord[]): Promise<ChainedRecord[]> {
  await new AuditStore(owner).append(records);
  const tenants = [...new Set(records.map((record) => record.tenantId))];
  const stored = (await Promise.all(tenants.map((tenantId) => selectChainPage(owner, tenantId, 0, Number.MAX_SAFE_INTEGER, 100_000)))).flat();
  const ids = new Set(records.map((record) => record.id));
  return stored.filter((record) => ids.has(record.id));
}

/**
 * A tenant's records in [since, until) as the hot export reads them: through audit_records_readable,
 * masked, in seq order, as the application role.
 */
export function readThroughView(app: DatabasePool, tenantId: string, range = { since: '2000-01-01T00:00:00.000Z', until: '2100-01-01T00:00:00.000Z' }): Promise<ChainedRecord[]> {
  return withTenant(app, tenantId, async (tx) => {
    const read: ChainedRecord[] = [];
    let reading: Promise<void> | undefined;
    await streamRecordsInRange(tx, tenantId, range, (rows) => {
      reading = (async () => { for await (const row of rows) read.push(row as ChainedRecord); })();
    });
    await reading;
    return read;
  });
}

export interface TestBucket extends ObjectStore {
  /** Every object key in the bucket. */
  keys(prefix?: string): Promise<string[]>;
  remove(): Promise<void>;
}

export async function createTestBucket(prefix: string): Promise<TestBucket> {
  const bucket = `${prefix}-${randomBytes(4).toString('hex')}`;
  const store = createObjectStore(config().s3, bucket);
  await store.s3.makeBucket(bucket, config().s3.region);
  const keys = async (under = '') => {
    const found: string[] = [];
    for await (const item of store.s3.listObjectsV2(bucket, under, true)) if (item.name) found.push(item.name);
    return found.sort();
  };
  return {
    ...store,
    keys,
    async remove() {
      await store.s3.removeObjects(bucket, await keys());
      await store.s3.removeBucket(bucket);
    },
  };
}

/** RFC 4180 CSV into rows of cells (quoted cells may hold commas, quotes and line breaks). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') { cell += '"'; i += 1; } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') { row.push(cell); cell = ''; } else if (char === '\r' && text[i + 1] === '\n') {
      row.push(cell); rows.push(row); row = []; cell = ''; i += 1;
    } else cell += char;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}
