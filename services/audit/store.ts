import { extendChain } from './chain';
import type { AuditRecord } from './record';
import type { DatabasePool } from '../../db/pool';
import {
  advanceChainHeads, ensureAuditPartition, insertAuditRecords, lockChainHeads, selectStoredAuditIds,
} from '../../db/queries/audit/audit-records.queries';
import { retryTransient } from '../../db/retry';

export interface AppendResult {
  stored: number;
  /** Records already stored (a redelivered event) or repeated within the batch. */
  duplicates: number;
}

/** YYYY-MM-01 of an ISO timestamp, in UTC: the partition the record belongs to. */
export function monthOf(timestamp: string): string {
  return `${timestamp.slice(0, 7)}-01`;
}

/**
 * Appends records to their tenants' chains, exactly once per record id.
 *
 * One transaction per batch: lock the heads of the batch's tenants, drop the records already
 * stored, give the rest the next seqs and hashes in batch order, insert them in one statement and
 * advance the heads. The duplicate check runs under the head locks, so two writers holding the same
 * redelivered record cannot both insert it. A duplicate is filtered out rather than left to
 * ON CONFLICT DO NOTHING, because a silently skipped row would already have taken a seq and left a
 * gap in the chain; the primary key remains the last guard.
 */
export class AuditStore {
  /** Months whose partition this process has already ensured: DDL runs once per month, not per batch. */
  private readonly months = new Set<string>();

  constructor(private readonly pool: DatabasePool) {}

  async append(records: readonly AuditRecord[]): Promise<AppendResult> {
    const unique = [...new Map(records.map((record) => [record.id, record])).values()];
    if (unique.length === 0) return { stored: 0, duplicates: records.length };
    await this.ensurePartitions(unique);
    const stored = await retryTransient(() => this.pool.transaction(async (tx) => {
      const heads = await lockChainHeads(tx, [...new Set(unique.map((record) => record.tenantId))]);
      const timestamps = unique.map((record) => record.timestamp).sort();
      const already = await selectStoredAuditIds(tx, unique.map((record) => record.id), timestamps[0], timestamps.at(-1)!);
      const fresh = unique.filter((record) => !already.has(record.id));
      if (fresh.length === 0) return 0;
      const chained = [...heads.values()].flatMap((head) => {
        const links = extendChain({ seq: head.lastSeq, hash: head.lastHash }, fresh.filter((record) => record.tenantId === head.tenantId));
        const last = links.at(-1);
        if (last) Object.assign(head, { lastSeq: last.seq, lastHash: last.hash });
        return links;
      });
      await insertAuditRecords(tx, chained);
      await advanceChainHeads(tx, [...heads.values()]);
      return chained.length;
    }));
    return { stored, duplicates: records.length - stored };
  }

  /** Ensures the partitions of these records' months, each once per process. */
  async ensurePartitions(records: readonly Pick<AuditRecord, 'timestamp'>[]): Promise<void> {
    for (const month of new Set(records.map((record) => monthOf(record.timestamp)))) {
      if (this.months.has(month)) continue;
      await ensureAuditPartition(this.pool, month);
      this.months.add(month);
    }
  }
}
